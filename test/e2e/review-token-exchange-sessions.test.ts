import request from 'supertest';
import { makeApiResource, makeAppClient } from '../helpers/apps';
import { claimsOf } from '../helpers/dpop';
import { makeUser, signIn } from '../helpers/factories';
import { basicAuth, obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Security review of token exchange (docs/token-exchange.md): the session an exchange opens for the calling client is
 * not a sign-in of that client.
 *
 * 1. It copies the browser session of its parent (so it ends with it), and `session_ended()` sent a back-channel logout
 *    token for that browser session's `sid` whenever it ended: the subject's application revoking its own grant, or the
 *    caller revoking its exchanged token, told the caller that the person's browser session had ended, and an
 *    application that also signed the person in (express-openid-connect and the like) signed them out while that
 *    browser session was still live.
 * 2. An id_token as subject is accepted "only while a session of that client under its sid is live"; the exchanged
 *    session of the same client under the same browser session counted as one, so an application whose own sign-in
 *    had ended could still exchange its id_token, and with the scopes another application's grant gave.
 */
const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const AT = 'urn:ietf:params:oauth:token-type:access_token';
const ID = 'urn:ietf:params:oauth:token-type:id_token';

let t: TestApp;
let orders: Awaited<ReturnType<typeof makeApiResource>>;
let inventory: Awaited<ReturnType<typeof makeApiResource>>;
type Client = Awaited<ReturnType<typeof makeAppClient>> & { auth: string };
const withAuth = (c: Awaited<ReturnType<typeof makeAppClient>>): Client => ({ ...c, auth: basicAuth(c.clientId, c.clientSecret!) });

beforeAll(async () => {
  t = await createTestApp();
  orders = await makeApiResource(t, { scopes: ['orders:read'] });
  inventory = await makeApiResource(t, { scopes: ['orders:read', 'stock:read'] });
});
afterAll(async () => {
  await t?.close();
});

const token = (auth: string, form: Record<string, string | undefined>) =>
  request(t.app)
    .post('/api/oauth/token')
    .set({ Authorization: auth })
    .type('form')
    .send(Object.fromEntries(Object.entries(form).filter(([, v]) => v !== undefined)));

/** A web app that signs people in and may also exchange (and has a back-channel logout URI). */
async function webApp(): Promise<Client> {
  const c = withAuth(
    await makeAppClient(t, {
      grantTypes: ['authorization_code', 'refresh_token', GRANT],
      allowedResources: [orders.identifier, inventory.identifier],
      scopes: ['openid', 'profile', 'email', 'orders:read'],
    }),
  );
  await t.db('oauth_clients').where({ client_id: c.clientId }).update({ backchannel_logout_uri: 'https://rp.example.com/backchannel' });
  return c;
}

async function signInTo(agent: Parameters<typeof obtainCode>[0], client: Client, resource?: string) {
  const { code, verifier, redirectUri } = await obtainCode(agent, client, {
    scope: 'openid orders:read',
    ...(resource ? { resource } : {}),
  });
  const res = await token(client.auth, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: redirectUri,
    resource,
  });
  expect(res.status).toBe(200);
  return res.body as { access_token: string; refresh_token: string; id_token: string };
}

const exchange = (caller: Client, subjectToken: string, type = AT) =>
  token(caller.auth, { grant_type: GRANT, subject_token: subjectToken, subject_token_type: type, resource: inventory.identifier });

const deliveriesTo = async (clientId: string) => t.db('backchannel_logout_deliveries').where({ client_id: clientId });

test('an exchanged session ending sends no logout token to the caller: the person’s browser session is still live', async () => {
  const shop = await webApp();
  const stock = await webApp();
  const user = await makeUser(t);
  const { agent } = await signIn(t, user);
  const shopTokens = await signInTo(agent, shop, orders.identifier);
  await signInTo(agent, stock);

  // The stock app exchanges the shop's token, then the shop's grant ends (the shop revokes its refresh token).
  const first = await exchange(stock, shopTokens.access_token);
  expect(first.status).toBe(200);
  const revoked = await request(t.app)
    .post('/api/oauth/revoke')
    .set('Authorization', shop.auth)
    .type('form')
    .send({ token: shopTokens.refresh_token });
  expect(revoked.status).toBe(200);
  // The shop is told (its own session ended); the stock app is not: its sign-in under the same browser session lives on.
  expect(await deliveriesTo(shop.clientId)).toHaveLength(1);
  expect(await deliveriesTo(stock.clientId)).toEqual([]);

  // The stock app revoking a token it exchanged does not sign anyone out of it either.
  const again = await signInTo(agent, shop, orders.identifier);
  const second = await exchange(stock, again.access_token);
  expect(second.status).toBe(200);
  await request(t.app).post('/api/oauth/revoke').set('Authorization', stock.auth).type('form').send({ token: second.body.access_token });
  const sid = claimsOf(second.body.access_token).sid as string;
  expect((await t.db('sessions').where({ id: sid }).first()).revoked_at).not.toBeNull();
  expect(await deliveriesTo(stock.clientId)).toEqual([]);

  // A real sign-out of the browser session still tells both.
  expect((await agent.post('/api/auth/logout')).status).toBeLessThan(300);
  expect(await deliveriesTo(stock.clientId)).toHaveLength(1);
});

test('an id_token whose own session ended is not exchanged through a session the client got by exchange', async () => {
  const shop = await webApp();
  const stock = await webApp();
  const user = await makeUser(t);
  const { agent } = await signIn(t, user);
  const shopTokens = await signInTo(agent, shop, orders.identifier);
  const stockTokens = await signInTo(agent, stock);

  const exchanged = await exchange(stock, shopTokens.access_token);
  expect(exchanged.status).toBe(200);
  // The stock app's own sign-in ends (it revokes its refresh token).
  await request(t.app).post('/api/oauth/revoke').set('Authorization', stock.auth).type('form').send({ token: stockTokens.refresh_token });

  const res = await exchange(stock, stockTokens.id_token, ID);
  expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
  expect(res.body.access_token).toBeUndefined();
});
