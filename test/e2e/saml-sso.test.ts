import request from 'supertest';
import { makeSignedInUser } from '../helpers/factories';
import { authnRequestXml, createSamlApp, decodeResponse, makeTestSp, readPostForm, redirectQuery } from '../helpers/saml';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
let admin: string;
beforeAll(async () => {
  t = await createTestApp();
  admin = (await makeSignedInUser(t, ['admin'])).bearer;
});
afterAll(async () => t?.close());

test('smoke', async () => {
  const sp = makeTestSp();
  await createSamlApp(t, admin, sp);
  const meta = await request(t.app).get('/saml/metadata');
  console.log(meta.status, meta.text.slice(0, 600));
  const user = await makeSignedInUser(t, []);
  const { xml } = authnRequestXml(t, sp);
  const res = await request(t.app).get(`/saml/sso?${redirectQuery(xml, 'relay-1')}`);
  console.log(res.status, res.headers.location, res.text?.slice(0, 300));
  const cont = await request(t.app).get(new URL(res.headers.location).pathname + new URL(res.headers.location).search).set('Cookie', `accessToken=${user.accessToken}`);
  console.log(cont.status, cont.text.slice(0, 300));
  const form = readPostForm(cont.text);
  console.log(form.action, form.relayState, decodeResponse(form.message).xml);
});
