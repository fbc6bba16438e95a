// The one statement of the /me ceiling (express-me.cjs) and of the /me floor (express-floor.cjs), the session's live
// user with their active roles and permissions, and the handler both answer /me with.
'use strict';
const jwt = require('jsonwebtoken');

module.exports.LOAD_USER = `select u.id, u.email, u.first_name, u.last_name, u.email_verified,
       coalesce((select json_agg(json_build_object('id', ro.id, 'name', ro.name, 'application', ro.application) order by ro.name)
                   from user_roles ur join roles ro on ro.id = ur.role_id
                  where ur.user_id = u.id and ro.is_active), '[]'::json) as roles,
       coalesce((select json_agg(distinct rp.permission)
                   from user_roles ur join roles ro on ro.id = ur.role_id join role_permissions rp on rp.role_id = ro.id
                  where ur.user_id = u.id and ro.is_active and ro.application is null), '[]'::json) as permissions
  from sessions s join users u on u.id = s.user_id
 where s.id = $1 and s.user_id = $2 and s.revoked_at is null and s.expires_at > now() and u.is_active`;

/** The ceiling's answer for one row of LOAD_USER. */
module.exports.meBody = (u) => ({
  user: {
    id: u.id,
    email: u.email,
    first_name: u.first_name,
    last_name: u.last_name,
    email_verified: u.email_verified,
    roles: u.roles.map((r) => r.name),
    permissions: u.permissions,
  },
});

/**
 * The /me answer of the ceiling and the floor: the Bearer token verified (HS256 with `key`), then LOAD_USER as the
 * prepared statement `name` on `pool`; 401 when either refuses, 503 when the database fails, else `status` and meBody.
 */
module.exports.answerMe = async (req, res, { pool, key, name, status = 200 }) => {
  const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  let payload;
  try {
    payload = jwt.verify(match ? match[1] : '', key, { algorithms: ['HS256'] });
  } catch {
    return res.status(401).json({ error: 'unauthorized' });
  }
  try {
    const { rows } = await pool.query({ name, text: module.exports.LOAD_USER, values: [payload.sid, payload.userId] });
    const u = rows[0];
    if (!u) return res.status(401).json({ error: 'unauthorized' });
    res.status(status).json(module.exports.meBody(u));
  } catch {
    res.status(503).json({ error: 'service_unavailable' });
  }
};
