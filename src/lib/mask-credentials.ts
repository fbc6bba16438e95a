/**
 * Credentials in a URL shown to an operator (the console's Settings page, and any later settings form): the user
 * name and password of the userinfo part and every query parameter that carries one (libpq's `?password=`,
 * `?sslpassword=`, an `?auth_token=`…) are replaced by MASK; scheme, host, port, path and the other parameters stay, so
 * the operator still sees where it points. A value that is not a URL is returned as it is; one that looks like a URL
 * (`scheme://`) but does not parse is masked whole, since nothing in it can be told apart.
 */
export const MASK = '••••••';

/** Query parameter names that carry a credential (matched case-insensitively, anywhere in the name). */
const CREDENTIAL_PARAM = /pass|pwd|secret|token|key|auth|credential|user|login/i;

export function maskUrlCredentials(value: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value.trim())) return value;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return MASK;
  }
  const userinfo = url.username || url.password ? `${url.username ? MASK : ''}${url.password ? `:${MASK}` : ''}@` : '';
  const params = [...url.searchParams.entries()].map(
    ([name, v]) => `${encodeURIComponent(name)}=${CREDENTIAL_PARAM.test(name) ? MASK : encodeURIComponent(v)}`,
  );
  const search = params.length ? `?${params.join('&')}` : '';
  return `${url.protocol}//${userinfo}${url.host}${url.pathname === '/' && !value.includes(`${url.host}/`) ? '' : url.pathname}${search}${url.hash}`;
}

/** maskUrlCredentials applied to every string inside a value (arrays and objects of settings). */
export function maskCredentialsDeep(value: unknown): unknown {
  if (typeof value === 'string') return maskUrlCredentials(value);
  if (Array.isArray(value)) return value.map(maskCredentialsDeep);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskCredentialsDeep(v)]));
  return value;
}
