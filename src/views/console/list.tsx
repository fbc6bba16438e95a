import type { ComponentChildren } from 'preact';
import { Table, type Column } from './components';

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

/** The top of a page of one item or its form: the link back to the list, then the page's heading. */
export function BackLink(props: { href: string; label: string; heading: ComponentChildren }) {
  return (
    <>
      <p>
        <a href={props.href}>{props.label}</a>
      </p>
      <h1>{props.heading}</h1>
    </>
  );
}

/**
 * A console list page's body: its heading and sentence, the button to a new one's form, the table (or "none yet, create
 * one"), and what follows it.
 */
export function ListPage<T>(props: {
  says: { title: string; intro: string; caption: string; noneYet: string };
  create: { href: string; label: string; first: string };
  rows: readonly T[];
  columns: Array<Column<T>>;
  children?: ComponentChildren;
}) {
  const { says, create } = props;
  return (
    <>
      <h1>{says.title}</h1>
      <p>{says.intro}</p>
      <CreateButton href={create.href} label={create.label} />
      <Table
        caption={says.caption}
        rows={props.rows}
        empty={<NoneYet text={says.noneYet} href={create.href} link={create.first} />}
        columns={props.columns}
      />
      {props.children}
    </>
  );
}
