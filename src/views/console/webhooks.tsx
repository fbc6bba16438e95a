import type { WebhookDeliveryRow, WebhookSubscriptionRow } from '../../db/repositories/webhooks.repo';
import { Actions, Time } from '../kit';
import {
  ActionButton,
  Badge,
  Checkbox,
  CopyValue,
  Facts,
  Field,
  Pagination,
  PostForm,
  Select,
  Table,
  TextArea,
  type FieldErrors,
} from './components';
import { renderConsole, type ConsoleFrame } from './layout';

/** Webhooks (CONTRACT §17): subscriptions to audit events, their signing secrets (shown once) and deliveries. */

export function renderWebhooks(frame: ConsoleFrame, data: { webhooks: WebhookSubscriptionRow[] }): string {
  return renderConsole(
    frame,
    <>
      <h1>Webhooks</h1>
      <p>Your endpoints receive audit events as signed Standard Webhooks, retried for about 18 hours until they answer 2xx.</p>
      <p>
        <a class="button" href="/admin/webhooks/new">
          Create a webhook
        </a>
      </p>
      <Table
        caption="Webhook subscriptions"
        rows={data.webhooks}
        empty={
          <>
            No webhooks yet — <a href="/admin/webhooks/new">create one</a>.
          </>
        }
        columns={[
          { label: 'URL', wrap: true, cell: (w) => <a href={`/admin/webhooks/${w.id}`}>{w.url}</a> },
          { label: 'Events', wrap: true, cell: (w) => w.events.join(' ') },
          { label: 'Description', cell: (w) => w.description || '—' },
          { label: 'Status', cell: (w) => <Badge on={w.enabled} yes="Enabled" no="Disabled" /> },
          {
            label: 'Deliveries',
            cell: (w) => (
              <a href={`/admin/webhooks/${w.id}/deliveries`} aria-label={`View deliveries to ${w.url}`}>
                View
              </a>
            ),
          },
        ]}
      />
    </>,
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
  data: { webhook?: WebhookSubscriptionRow; values: WebhookValues; errors: FieldErrors; eventTypes: readonly string[] },
): string {
  const w = data.webhook;
  const v = data.values;
  return renderConsole(
    frame,
    <>
      <p>
        <a href="/admin/webhooks">← Webhooks</a>
      </p>
      <h1>{w ? (w.description ? `Webhook: ${w.description}` : 'Webhook') : 'Create a webhook'}</h1>
      {w ? (
        <>
          <Facts
            items={[
              ['URL', <code>{w.url}</code>],
              ['Status', <Badge on={w.enabled} yes="Enabled" no="Disabled" />],
              ['Created', <Time at={w.createdAt} />],
              ['Signing secret', 'Set (shown only when created or rotated)'],
            ]}
          />
          <p>
            <a href={`/admin/webhooks/${w.id}/deliveries`}>Deliveries of this webhook</a>
          </p>
        </>
      ) : null}
      <PostForm action={w ? `/admin/webhooks/${w.id}` : '/admin/webhooks'} csrf={frame.csrf}>
        <Field
          name="url"
          label="Endpoint URL"
          type="url"
          value={v.url}
          errors={data.errors}
          required
          hint="https (plain http only to localhost outside production); never a private address in production."
        />
        <TextArea
          name="events"
          label="Events"
          value={v.events}
          errors={data.errors}
          hint='Audit event types separated by spaces or lines: a type (user.created), a prefix ending in ".*" (auth.*), or * for every event.'
        />
        <details>
          <summary>Event types you can subscribe to</summary>
          <p class="event-types">
            {data.eventTypes.map((t) => (
              <>
                <code>{t}</code>{' '}
              </>
            ))}
          </p>
        </details>
        <Field name="description" label="Description" value={v.description} errors={data.errors} hint="Optional; for you." />
        <Checkbox name="enabled" label="Enabled (deliver events)" checked={v.enabled} />
        <Actions>
          <button type="submit">{w ? 'Save webhook' : 'Create webhook'}</button>
        </Actions>
      </PostForm>
      {w ? (
        <Actions>
          <ActionButton action={`/admin/webhooks/${w.id}/rotate`} csrf={frame.csrf} label="Rotate signing secret" danger />
          <ActionButton action={`/admin/webhooks/${w.id}/delete`} csrf={frame.csrf} label="Delete webhook" danger />
        </Actions>
      ) : null}
    </>,
  );
}

/** The one page that shows a webhook's signing secret: the answer to the create or rotate post, never cached or redirected to. */
export function renderWebhookSecret(
  frame: ConsoleFrame,
  data: { heading: string; webhook: WebhookSubscriptionRow; secret: string; rotated: boolean },
): string {
  const w = data.webhook;
  return renderConsole(
    frame,
    <>
      <h1>{data.heading}</h1>
      <p class="ok" role="status">
        Copy the signing secret now: it is shown only on this page and cannot be read back.
      </p>
      <div class="secret-box">
        <Facts
          items={[
            ['Endpoint URL', <code>{w.url}</code>],
            ['Signing secret', <CopyValue id="webhook-secret" label="signing secret" value={data.secret} />],
          ]}
        />
        <p>
          Verify each request's <code>webhook-signature</code> header with this secret using a Standard Webhooks library.
          {data.rotated ? ' The previous secret also signs for 24 hours, so you can switch without losing deliveries.' : ''}
        </p>
      </div>
      <p>
        <a href={`/admin/webhooks/${w.id}`}>I have copied the secret — continue to the webhook</a>
      </p>
    </>,
  );
}

const STATUS_LABEL: Record<string, string> = { pending: 'Pending', delivered: 'Delivered', failed: 'Failed' };

export function renderDeliveries(
  frame: ConsoleFrame,
  data: {
    webhook: WebhookSubscriptionRow;
    deliveries: WebhookDeliveryRow[];
    status: string;
    next?: string;
    first?: string;
    errors: FieldErrors;
  },
): string {
  const w = data.webhook;
  return renderConsole(
    frame,
    <>
      <p>
        <a href={`/admin/webhooks/${w.id}`}>← Webhook</a>
      </p>
      <h1>Deliveries</h1>
      <p>
        To <code>{w.url}</code>, newest first.
      </p>
      <form method="get" action={`/admin/webhooks/${w.id}/deliveries`} class="filters" role="search" aria-label="Deliveries">
        <Select
          name="status"
          label="Status"
          value={data.status}
          options={[
            { value: '', label: 'Any' },
            { value: 'pending', label: 'Pending' },
            { value: 'delivered', label: 'Delivered' },
            { value: 'failed', label: 'Failed' },
          ]}
        />
        <div>
          <button type="submit">Filter</button>
        </div>
      </form>
      {data.errors.cursor ? (
        <p class="error" role="alert">
          {data.errors.cursor}
        </p>
      ) : null}
      <Table
        caption="Deliveries"
        rows={data.deliveries}
        empty={data.status ? 'No delivery with this status.' : 'No deliveries yet: they appear when a subscribed event happens.'}
        columns={[
          { label: 'Event', cell: (d) => <code>{d.eventType}</code> },
          {
            label: 'Status',
            cell: (d) => (
              <Badge on={d.status !== 'failed'} yes={STATUS_LABEL[d.status] ?? d.status} no={STATUS_LABEL[d.status] ?? d.status} />
            ),
          },
          { label: 'Attempts', cell: (d) => d.attempts },
          {
            label: 'Last answer',
            wrap: true,
            cell: (d) => (d.lastResponseStatus !== null ? `HTTP ${d.lastResponseStatus}` : (d.lastError ?? '—')),
          },
          { label: 'Last attempt', cell: (d) => (d.lastAttemptAt ? <Time at={d.lastAttemptAt} /> : '—') },
          { label: 'Next attempt', cell: (d) => (d.status === 'pending' && d.nextAttemptAt ? <Time at={d.nextAttemptAt} /> : '—') },
          {
            label: 'Action',
            cell: (d) => (
              <ActionButton
                action={`/admin/webhooks/${w.id}/deliveries/${d.id}/redeliver`}
                csrf={frame.csrf}
                label="Redeliver"
                ariaLabel={`Redeliver ${d.eventType} (delivery ${d.id})`}
              />
            ),
          },
        ]}
      />
      <Pagination prev={data.first} next={data.next} label="Delivery pages" />
    </>,
  );
}
