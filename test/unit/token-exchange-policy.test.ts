import {
  actFor,
  checkExchangeParams,
  exchangeBinding,
  exchangeScopes,
  exchangeTarget,
  TOKEN_TYPE_ACCESS_TOKEN as AT,
  TOKEN_TYPE_ID_TOKEN as ID,
} from '../../src/services/oauth/token-exchange-policy';

/** RFC 8693 token exchange (docs/token-exchange.md): the policy as tables, facts in, decision out (no database). */
const errorOf = (verdict: { ok: boolean; error?: string }) => (verdict.ok ? null : verdict.error);

describe('checkExchangeParams', () => {
  const RT = 'urn:ietf:params:oauth:token-type:refresh_token';
  test.each<[string, Parameters<typeof checkExchangeParams>[0], string | null]>([
    ['an access token', { subjectToken: 's', subjectTokenType: AT }, null],
    ['an id_token', { subjectToken: 's', subjectTokenType: ID }, null],
    ['with an actor', { subjectToken: 's', subjectTokenType: AT, actorToken: 'a', actorTokenType: AT }, null],
    ['asking an access token', { subjectToken: 's', subjectTokenType: AT, requestedTokenType: AT }, null],
    ['no subject token', { subjectTokenType: AT }, 'invalid_request'],
    ['an empty subject token', { subjectToken: '', subjectTokenType: AT }, 'invalid_request'],
    ['no type', { subjectToken: 's' }, 'invalid_request'],
    ['a refresh token', { subjectToken: 's', subjectTokenType: RT }, 'invalid_request'],
    ['a foreign JWT', { subjectToken: 's', subjectTokenType: 'urn:ietf:params:oauth:token-type:jwt' }, 'invalid_request'],
    ['an actor without type', { subjectToken: 's', subjectTokenType: AT, actorToken: 'a' }, 'invalid_request'],
    ['an actor type alone', { subjectToken: 's', subjectTokenType: AT, actorTokenType: AT }, 'invalid_request'],
    ['an id_token actor', { subjectToken: 's', subjectTokenType: AT, actorToken: 'a', actorTokenType: ID }, 'invalid_request'],
    ['an empty actor', { subjectToken: 's', subjectTokenType: AT, actorToken: '', actorTokenType: AT }, 'invalid_request'],
    ['a refresh token asked for', { subjectToken: 's', subjectTokenType: AT, requestedTokenType: RT }, 'invalid_request'],
  ])('%s -> %s', (_what, params, error) => {
    expect(errorOf(checkExchangeParams(params))).toBe(error);
  });
});

describe('exchangeTarget', () => {
  test.each<[string, { resource?: string; audience?: string }, string[], string | null, string | null]>([
    ['resource', { resource: 'https://a/' }, [], 'https://a/', null],
    ['audience', { audience: 'https://a/' }, [], 'https://a/', null],
    ['both the same', { resource: 'https://a/', audience: 'https://a/' }, [], 'https://a/', null],
    ['both different', { resource: 'https://a/', audience: 'https://b/' }, [], null, 'invalid_target'],
    ['neither, one allowed', {}, ['https://a/'], 'https://a/', null],
    ['neither, two allowed', {}, ['https://a/', 'https://b/'], null, 'invalid_request'],
    ['neither, none allowed', {}, [], null, 'invalid_request'],
  ])('%s', (_what, params, allowed, identifier, error) => {
    const verdict = exchangeTarget(params, allowed);
    expect(errorOf(verdict)).toBe(error);
    if (verdict.ok) expect(verdict.identifier).toBe(identifier);
  });
});

describe('exchangeBinding: a bound token is never laundered', () => {
  test.each<[string, { subject?: string; actor?: string }, string | undefined, string | null, string | undefined]>([
    ['nothing bound, no proof: Bearer', {}, undefined, null, undefined],
    ['nothing bound, a proof: bound to it', {}, 'k1', null, 'k1'],
    ['subject bound, no proof', { subject: 'k1' }, undefined, 'invalid_dpop_proof', undefined],
    ['subject bound, another key', { subject: 'k1' }, 'k2', 'invalid_dpop_proof', undefined],
    ['subject bound, its key', { subject: 'k1' }, 'k1', null, 'k1'],
    ['actor bound, no proof', { actor: 'k1' }, undefined, 'invalid_dpop_proof', undefined],
    ['actor bound, its key', { actor: 'k1' }, 'k1', null, 'k1'],
    ['both bound to one key', { subject: 'k1', actor: 'k1' }, 'k1', null, 'k1'],
    ['bound to two keys', { subject: 'k1', actor: 'k2' }, 'k1', 'invalid_dpop_proof', undefined],
  ])('%s', (_what, bound, proof, error, jkt) => {
    const verdict = exchangeBinding(bound, proof);
    expect(errorOf(verdict)).toBe(error);
    if (verdict.ok) expect(verdict.jkt).toBe(jkt);
  });
});

describe('exchangeScopes: never wider than the subject token and the API', () => {
  const api = ['orders:read', 'orders:write', 'stock:read'];
  test.each<[string, string[], string[] | undefined, string[] | null]>([
    ['default: what both have', ['openid', 'orders:read'], undefined, ['orders:read']],
    ['asked within', ['orders:read', 'orders:write'], ['orders:write'], ['orders:write']],
    ['asked what the user never granted', ['orders:read'], ['stock:read'], null],
    ['asked what the API lacks', ['openid', 'orders:read'], ['openid'], null],
    ['nothing in common', ['openid', 'profile'], undefined, null],
    ['an empty scope is the default', ['orders:read'], [], ['orders:read']],
  ])('%s', (_what, subject, requested, scopes) => {
    const verdict = exchangeScopes(subject, api, requested);
    expect(verdict.ok ? verdict.scopes : null).toEqual(scopes);
    if (!verdict.ok) expect(verdict.error).toBe('invalid_scope');
  });
});

describe('actFor', () => {
  test.each([
    ['impersonation', undefined, undefined, undefined],
    ['delegation', undefined, { sub: 'api' }, { sub: 'api' }],
    ['a second delegation nests the first', { sub: 'api' }, { sub: 'stock' }, { sub: 'stock', act: { sub: 'api' } }],
    ['a delegated token exchanged without actor keeps its act', { sub: 'api' }, undefined, { sub: 'api' }],
  ])('%s', (_what, subjectAct, actor, act) => {
    expect(actFor(subjectAct, actor)).toEqual(act);
  });
});
