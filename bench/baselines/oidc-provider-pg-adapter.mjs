// node-oidc-provider's documented adapter interface (constructor(name), upsert, find, findByUid, findByUserCode,
// consume, destroy, revokeByGrantId) on PostgreSQL with `pg`, after the project's example adapters: one table of
// JSON payloads keyed by model name and id, with the grant, uid and user code as indexed columns. Every call is one
// prepared statement on a pool of 10, like the /me ceiling's. Used by oidc-provider.mjs when it is given a database URL:
// the floor of a refresh rotation whose tokens live in a database every instance sees (docs/performance.md).
import pg from 'pg';

const SCHEMA = `create table if not exists oidc_payloads (
    model text not null,
    id text not null,
    payload jsonb not null,
    grant_id text,
    uid text,
    user_code text,
    expires_at timestamptz,
    consumed_at timestamptz,
    primary key (model, id)
  );
  create index if not exists oidc_payloads_grant on oidc_payloads (grant_id);
  create index if not exists oidc_payloads_uid on oidc_payloads (uid);
  create index if not exists oidc_payloads_user_code on oidc_payloads (user_code);`;

const UPSERT = `insert into oidc_payloads (model, id, payload, grant_id, uid, user_code, expires_at)
  values ($1, $2, $3, $4, $5, $6, case when $7::int is null then null else now() + make_interval(secs => $7) end)
  on conflict (model, id) do update set payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid,
    user_code = excluded.user_code, expires_at = excluded.expires_at`;
const LIVE = `(expires_at is null or expires_at > now())`;
const COLUMNS = `payload, extract(epoch from consumed_at)::int as consumed`;

/** Creates the table (the bench's database is fresh) and returns the adapter class. */
export async function pgAdapter(connectionString) {
  const pool = new pg.Pool({ connectionString, max: 10 });
  await pool.query(SCHEMA);
  const one = async (name, text, values) => {
    const { rows } = await pool.query({ name, text, values });
    const row = rows[0];
    if (!row) return undefined;
    return row.consumed ? { ...row.payload, consumed: row.consumed } : row.payload;
  };
  return class PgAdapter {
    constructor(model) {
      this.model = model;
    }
    async upsert(id, payload, expiresIn) {
      await pool.query({
        name: 'oidc_upsert',
        text: UPSERT,
        values: [this.model, id, payload, payload.grantId ?? null, payload.uid ?? null, payload.userCode ?? null, expiresIn ?? null],
      });
    }
    find(id) {
      return one('oidc_find', `select ${COLUMNS} from oidc_payloads where model = $1 and id = $2 and ${LIVE}`, [this.model, id]);
    }
    findByUid(uid) {
      return one('oidc_find_uid', `select ${COLUMNS} from oidc_payloads where model = $1 and uid = $2 and ${LIVE}`, [this.model, uid]);
    }
    findByUserCode(userCode) {
      return one('oidc_find_user_code', `select ${COLUMNS} from oidc_payloads where model = $1 and user_code = $2 and ${LIVE}`, [
        this.model,
        userCode,
      ]);
    }
    async consume(id) {
      await pool.query({
        name: 'oidc_consume',
        text: 'update oidc_payloads set consumed_at = now() where model = $1 and id = $2',
        values: [this.model, id],
      });
    }
    async destroy(id) {
      await pool.query({ name: 'oidc_destroy', text: 'delete from oidc_payloads where model = $1 and id = $2', values: [this.model, id] });
    }
    async revokeByGrantId(grantId) {
      await pool.query({ name: 'oidc_revoke_grant', text: 'delete from oidc_payloads where grant_id = $1', values: [grantId] });
    }
  };
}
