import type { Webhook, WebhookDelivery } from '../../wire/webhooks/webhooks.schemas';
import { pageEnv } from '../../views/env';
import { Actions, Submit, Time } from '../../views/kit';
import {
  ActionButton,
  Badge,
  bindForm,
  Checkbox,
  CopyValue,
  Facts,
  FilterForm,
  Field,
  Pagination,
  PostForm,
  Select,
  Table,
  TextArea,
  type FieldErrors,
} from '../../views/console/components';
import { BackLink, ListPage } from '../../views/console/list';
import { renderConsole, type ConsoleFrame } from '../../views/console/layout';

/** Webhooks (CONTRACT §17): subscriptions to audit events, their signing secrets (shown once) and deliveries. */

const x = () => pageEnv().t.console.webhooks;

export function renderWebhooks(frame: ConsoleFrame, data: { webhooks: Webhook[] }): string {
  const { webhooks: h, common: k } = pageEnv().t.console;
  return renderConsole(
    frame,
    <ListPage
      says={h}
      create={{ href: '/admin/webhooks/new', label: h.create, first: h.createOne }}
      rows={data.webhooks}
      columns={[
        { label: h.url, wrap: true, cell: (w) => <a href={`/admin/webhooks/${w.id}`}>{w.url}</a> },
        { label: h.events, wrap: true, cell: (w) => w.events.join(' ') },
        { label: k.description, cell: (w) => w.description || '—' },
        { label: k.status, cell: (w) => <Badge on={w.enabled} yes={h.enabled} no={h.disabled} /> },
        {
          label: h.deliveries,
          cell: (w) => (
            <a href={`/admin/webhooks/${w.id}/deliveries`} aria-label={h.viewDeliveries(w.url)}>
              {h.view}
            </a>
          ),
        },
      ]}
    />,
  );
}

export interface WebhookValues {
  url: string;
  events: string;
  description: string;
  enabled: boolean;
}

export function renderWebhookForm(
  frame: ConsoleFrame,
  data: { webhook?: Webhook; values: WebhookValues; errors: FieldErrors; eventTypes: readonly string[] },
): string {
  const w = data.webhook;
  const v = data.values;
  const bound = bindForm(v, data.errors);
  const { webhooks: h, common: k } = pageEnv().t.console;
  return renderConsole(
    frame,
    <>
      <BackLink href="/admin/webhooks" label={h.back} heading={w ? (w.description ? h.named(w.description) : h.webhook) : h.create} />
      {w ? (
        <>
          <Facts
            items={[
              [h.url, <code>{w.url}</code>],
              [k.status, <Badge on={w.enabled} yes={h.enabled} no={h.disabled} />],
              [k.created, <Time at={w.created_at} />],
              [h.signingSecret, h.secretSet],
            ]}
          />
          <p>
            <a href={`/admin/webhooks/${w.id}/deliveries`}>{h.deliveriesOfThis}</a>
          </p>
        </>
      ) : null}
      <PostForm action={w ? `/admin/webhooks/${w.id}` : '/admin/webhooks'} csrf={frame.csrf}>
        <Field {...bound('url')} label={h.endpointUrl} type="url" required hint={h.urlHint} />
        <TextArea {...bound('events')} label={h.events} hint={h.eventsHint} />
        <details>
          <summary>{h.eventTypes}</summary>
          <p class="event-types">
            {data.eventTypes.map((t) => (
              <>
                <code>{t}</code>{' '}
              </>
            ))}
          </p>
        </details>
        <Field {...bound('description')} label={k.description} hint={h.descriptionHint} />
        <Checkbox name="enabled" label={h.enabledField} checked={v.enabled} />
        <Submit label={w ? h.save : h.createButton} />
      </PostForm>
      {w ? (
        <Actions>
          <ActionButton action={`/admin/webhooks/${w.id}/rotate`} csrf={frame.csrf} label={h.rotate} danger />
          <ActionButton action={`/admin/webhooks/${w.id}/delete`} csrf={frame.csrf} label={h.delete} danger />
        </Actions>
      ) : null}
    </>,
  );
}

/** The one page that shows a webhook's signing secret: the answer to the create or rotate post, never cached or redirected to. */
export function renderWebhookSecret(
  frame: ConsoleFrame,
  data: { heading: string; webhook: Webhook; secret: string; rotated: boolean },
): string {
  const w = data.webhook;
  const h = x();
  return renderConsole(
    frame,
    <>
      <h1>{data.heading}</h1>
      <p class="ok" role="status">
        {h.copySecretNow}
      </p>
      <div class="secret-box">
        <Facts
          items={[
            [h.endpointUrl, <code>{w.url}</code>],
            [h.signingSecret, <CopyValue id="webhook-secret" label={h.signingSecretLower} value={data.secret} />],
          ]}
        />
        <p>
          {h.verifyBefore} <code>webhook-signature</code>
          {h.verifyAfter.startsWith('-') ? '' : ' '}
          {h.verifyAfter}
          {data.rotated ? ` ${h.previousSigns}` : ''}
        </p>
      </div>
      <p>
        <a href={`/admin/webhooks/${w.id}`}>{h.copiedContinue}</a>
      </p>
    </>,
  );
}

const statusLabel = (status: string) => {
  const h = x();
  return status === 'pending' ? h.pending : status === 'delivered' ? h.delivered : status === 'failed' ? h.failed : status;
};

export function renderDeliveries(
  frame: ConsoleFrame,
  data: {
    webhook: Webhook;
    deliveries: WebhookDelivery[];
    status: string;
    next?: string;
    first?: string;
  },
): string {
  const w = data.webhook;
  const { webhooks: h, common: k } = pageEnv().t.console;
  return renderConsole(
    frame,
    <>
      <p>
        <a href={`/admin/webhooks/${w.id}`}>{h.backToWebhook}</a>
      </p>
      <h1>{h.deliveries}</h1>
      <p>
        {h.to} <code>{w.url}</code>, {h.toNewestFirst}
      </p>
      <FilterForm action={`/admin/webhooks/${w.id}/deliveries`} label={h.deliveries} button={h.filter}>
        <Select
          name="status"
          label={k.status}
          value={data.status}
          options={[
            { value: '', label: h.any },
            { value: 'pending', label: h.pending },
            { value: 'delivered', label: h.delivered },
            { value: 'failed', label: h.failed },
          ]}
        />
      </FilterForm>
      <Table
        caption={h.deliveries}
        rows={data.deliveries}
        empty={data.status ? h.noneWithStatus : h.noDeliveries}
        columns={[
          { label: h.event, cell: (d) => <code>{d.event_type}</code> },
          {
            label: k.status,
            cell: (d) => <Badge on={d.status !== 'failed'} yes={statusLabel(d.status)} no={statusLabel(d.status)} />,
          },
          { label: h.attempts, cell: (d) => d.attempts },
          {
            label: h.lastAnswer,
            wrap: true,
            cell: (d) => (d.last_response_status !== null ? `HTTP ${d.last_response_status}` : (d.last_error ?? '—')),
          },
          { label: h.lastAttempt, cell: (d) => (d.last_attempt_at ? <Time at={d.last_attempt_at} /> : '—') },
          { label: h.nextAttempt, cell: (d) => (d.status === 'pending' && d.next_attempt_at ? <Time at={d.next_attempt_at} /> : '—') },
          {
            label: k.action,
            cell: (d) => (
              <ActionButton
                action={`/admin/webhooks/${w.id}/deliveries/${d.id}/redeliver`}
                csrf={frame.csrf}
                label={h.redeliver}
                ariaLabel={h.redeliverNamed(d.event_type, d.id)}
              />
            ),
          },
        ]}
      />
      <Pagination prev={data.first} next={data.next} label={h.pagesLabel} />
    </>,
  );
}
