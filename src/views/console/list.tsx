import type { ComponentChildren } from 'preact';

/** The pieces every console list page has: the create button above it, the sentence of an empty list. */
/** A list page's button to the form that makes a new one, and any links beside it. */
export function CreateButton(props: { href: string; label: string; children?: ComponentChildren }) {
  return (
    <p>
      <a class="button" href={props.href}>
        {props.label}
      </a>
      {props.children}
    </p>
  );
}

/** An empty list's sentence with the link to make the first one ("None yet. Create one."). */
export function NoneYet(props: { text: string; href: string; link: string }) {
  return (
    <>
      {props.text} <a href={props.href}>{props.link}</a>.
    </>
  );
}

/** The link back to the list, above a page of one item or its form. */
export function BackLink(props: { href: string; label: string }) {
  return (
    <p>
      <a href={props.href}>{props.label}</a>
    </p>
  );
}
