// The one statement of the /me ceiling (express-me.cjs) and of the /me floor (express-floor.cjs): the session's live
// user with their active roles and permissions.
'use strict';

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
