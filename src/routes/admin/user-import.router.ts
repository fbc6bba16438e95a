import express from 'express';
import { z } from 'zod';
import { UUID_PATTERN } from '../../lib/ids';
import { exportUsersPage, importUsers, MAX_IMPORT_ROWS, rowsOfCsv } from '../../services/user-import.service';
import { endpoint, reply, route, routerOf, serve } from '../route';

/** JSON or CSV bodies of up to 10,000 rows (a Firebase row with its hash parameters is about 400 bytes). */
const importBodyParser = (() => {
  const json = express.json({ limit: '16mb' });
  const csv = express.text({ limit: '16mb', type: ['text/csv', 'application/csv'] });
  return (req: express.Request, res: express.Response, next: express.NextFunction) => json(req, res, () => csv(req, res, next));
})();

const importBody = z
  .union([
    z.array(z.unknown()).meta({
      description:
        'Rows { email, first_name, last_name, email_verified?, roles?: [role names], password_hash?, password_salt?, hash_config? } ' +
        `(at most ${MAX_IMPORT_ROWS}); or text/csv with a header row of the same names, roles separated by ";", hash_config as JSON`,
    }),
    z.string().meta({ description: 'text/csv' }),
  ])
  .meta({ id: 'UserImport' });

const importQuery = z.object({
  dry_run: z
    .enum(['true', 'false', '1', '0'], { error: 'dry_run must be true or false' })
    .optional()
    .transform((v) => v === 'true' || v === '1'),
});

const importResult = z.strictObject({
  imported: z.number().int().meta({ description: 'Accounts created (0 for a dry run)' }),
  dry_run: z.boolean(),
});

const exportQuery = z.object({ after: z.string().regex(UUID_PATTERN, 'after must be a user id').optional() });

/** Import and export of accounts (docs/passwords.md, "Moving users in"); the console's page uses the same endpoints. */
export const userImportApi = {
  import: endpoint(
    {
      method: 'post',
      path: '/users/import',
      summary: 'Import accounts (JSON or CSV), all or nothing, with their password hashes',
      description:
        'Each row is checked; with any problem nothing is created and the 400 lists every one as details [{ row, email, message }]. ' +
        'password_hash is self-describing: bcrypt, argon2id/argon2i (PHC), scrypt (PHC), PBKDF2 (Django or PHC), or Firebase scrypt ' +
        '(password_hash + password_salt + hash_config). An imported password is verified in its own scheme at the next sign-in, then ' +
        're-hashed with bcrypt. Rows with roles need users:manage_roles. `?dry_run=true` checks without writing (200).',
      auth: 'user',
      permission: 'users:write',
      noStore: true,
      bodyParser: importBodyParser,
      query: importQuery,
      body: importBody,
      response: { status: 201, description: '{ imported, dry_run }', schema: importResult },
      errors: [413],
    },
    async ({ body, query, principal }, ctx) => {
      const rows = typeof body === 'string' ? rowsOfCsv(body) : body;
      const result = await importUsers(ctx, principal, rows, { dryRun: query.dry_run });
      // A dry run creates nothing: 200, not 201.
      return query.dry_run ? reply(200, result) : result;
    },
  ),
};

export const createUserImportRouter = routerOf(
  (_app, deps) => [
    ...serve(deps, userImportApi),
    route(
      {
        method: 'get',
        path: '/users/export',
        summary: 'Export accounts as JSON lines, 1,000 a page (never a secret)',
        description:
          'application/x-ndjson, one account a line: { id, email, first_name, last_name, email_verified, is_active, roles, created_at, ' +
          'last_login_at }. A further page is named by a `Link: <…>; rel="next"` header. Never a password hash, factor secret, ' +
          'recovery code, passkey key or token.',
        auth: 'user',
        permission: 'users:read',
        noStore: true,
        query: exportQuery,
        response: { description: 'application/x-ndjson', kind: 'html' },
      },
      async ({ query, ctx }, _req, res) => {
        const page = await exportUsersPage(ctx, query.after ?? null);
        if (page.next) {
          res.set('Link', `<${ctx.config.baseUrl}/api/admin/users/export?${new URLSearchParams({ after: page.next })}>; rel="next"`);
        }
        const lines = page.users.map((u) =>
          JSON.stringify({
            id: u.id,
            email: u.email,
            first_name: u.firstName,
            last_name: u.lastName,
            email_verified: u.emailVerified,
            is_active: u.isActive,
            roles: u.roles,
            created_at: u.createdAt.toISOString(),
            last_login_at: u.lastLoginAt ? u.lastLoginAt.toISOString() : null,
          }),
        );
        res
          .status(200)
          .type('application/x-ndjson')
          .send(lines.length ? `${lines.join('\n')}\n` : '');
      },
    ),
  ],
  { tags: ['Users'] },
);
