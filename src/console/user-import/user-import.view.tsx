import type { ErrorDetail } from '../../errors';
import { pageEnv } from '../../views/env';
import { Submit } from '../../views/kit';
import { Checkbox, PostForm, Select, Table, TextArea, type FieldErrors } from '../../views/console/components';
import { renderConsole, type ConsoleFrame } from '../../views/console/layout';
import { BackLink } from '../../views/console/list';

/**
 * Import of accounts (docs/passwords.md): the pasted JSON or CSV, a dry run by default, the API's per-row report on a
 * refusal; after a dry run the same content is shown again, ready to import for real. The export is the API's.
 */

export interface ImportValues {
  format: string;
  content: string;
  dry_run: string;
}

export function renderImportForm(
  frame: ConsoleFrame,
  data: { values: ImportValues; errors: FieldErrors; report: readonly ErrorDetail[]; checked?: number },
): string {
  const h = pageEnv().t.console.userImport;
  return renderConsole(
    frame,
    <>
      <BackLink href="/admin/users" label={h.back} heading={data.checked === undefined ? h.title : h.dryRunTitle} />
      <p>{h.intro}</p>
      <p>
        <a href="/api/admin/users/export" download="accounts.jsonl">
          {h.exportLink}
        </a>{' '}
        {h.exportHint}
      </p>
      {data.checked !== undefined ? (
        <p class="ok" role="status">
          {h.dryRunPassed(data.checked)}
        </p>
      ) : null}
      {data.report.length > 0 ? (
        <Table
          caption={h.reportCaption}
          rows={data.report}
          empty=""
          columns={[
            { label: h.row, cell: (d) => (d.row === undefined ? '—' : String(d.row)) },
            { label: h.email, wrap: true, cell: (d) => d.email || '—' },
            { label: h.problem, wrap: true, cell: (d) => d.message },
          ]}
        />
      ) : null}
      <PostForm action="/admin/users/import" csrf={frame.csrf}>
        <Select
          name="format"
          label={h.format}
          value={data.values.format === 'csv' ? 'csv' : 'json'}
          options={[
            { value: 'json', label: 'JSON' },
            { value: 'csv', label: 'CSV' },
          ]}
        />
        <TextArea name="content" label={h.content} value={data.values.content} errors={data.errors} hint={h.contentHint} />
        <Checkbox name="dry_run" label={h.dryRun} checked={data.values.dry_run === 'true'} hint={h.dryRunHint} />
        <Submit label={h.submit} />
      </PostForm>
    </>,
  );
}
