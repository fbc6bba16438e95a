/**
 * jose, loaded on first use rather than at start (issue 10): a restart opens the stored signing keys with Node's own
 * JWK import, and jose's module tree is needed only to generate a key, sign the first id_token or verify an
 * id_token_hint. The one place that loads it.
 */
export const jose = (): typeof import('jose') => require('jose');
