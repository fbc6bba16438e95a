import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { signatureHeader } from '../../src/services/webhooks/delivery.service';
import { startWebhookWorker, type WebhookWorker } from '../../src/services/webhooks/queue';
import { makeSignedInUser, uniqueEmail } from '../helpers/factories';
import { freePort } from '../helpers/oauth';
import { ROOT } from '../helpers/processes';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * docs/webhooks.md "Verifying a delivery": the Node.js and Python receivers printed there, copied out of the document
 * as they are, run as real processes and receive real deliveries from the server; a forged or stale request is
 * refused with 401.
 */
const DOC = fs.readFileSync(path.join(ROOT, 'docs/webhooks.md'), 'utf8');
const OUT = path.join(ROOT, 'test-output', 'webhook-snippets');

function snippet(lang: 'js' | 'python'): string {
  const match = new RegExp('<!-- verified by test/e2e/webhooks-docs\\.test\\.ts -->\\n```' + lang + '\\n([\\s\\S]*?)\\n```').exec(DOC);
  if (!match) throw new Error(`docs/webhooks.md has no verified ${lang} snippet`);
  return match[1]!;
}

interface Snippet {
  proc: ChildProcess;
  url: string;
  output: () => string;
}

async function runSnippet(command: string, file: string, secret: string): Promise<Snippet> {
  const port = await freePort();
  const proc = spawn(command, [file], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, WEBHOOK_SECRET: secret, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}/hooks`;
  for (let i = 0; i < 200; i++) {
    if (proc.exitCode !== null) throw new Error(`${command} ${file} exited: ${out}`);
    try {
      await fetch(url, { method: 'GET' });
      return { proc, url, output: () => out };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`${command} ${file} did not listen: ${out}`);
}

let t: TestApp;
let worker: WebhookWorker;
let admin: string;
const running: ChildProcess[] = [];

beforeAll(async () => {
  t = await createTestApp();
  admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
  worker = await startWebhookWorker(t.ctx, { connectionString: t.databaseUrl, pollIntervalMs: 100, concurrency: 2 });
  fs.mkdirSync(OUT, { recursive: true });
});
afterAll(async () => {
  for (const proc of running) proc.kill('SIGKILL');
  await worker?.stop();
  await t.close();
});

test.each([
  ['Node.js', 'node', 'receiver.js', 'js'],
  ['Python', 'python3', 'receiver.py', 'python'],
] as const)('the %s receiver of docs/webhooks.md verifies a real delivery and refuses a forged one', async (_name, command, file, lang) => {
  const created = await request(t.app)
    .post('/api/admin/webhooks')
    .set('Authorization', admin)
    .send({ url: 'http://127.0.0.1:1/x', events: ['user.created'] });
  expect(created.status).toBe(201);
  const { webhook, secret } = created.body as { webhook: { id: string }; secret: string };
  // The Node.js snippet requires standardwebhooks: it runs from inside the repository, where node_modules has it.
  const target = path.join(OUT, file);
  fs.writeFileSync(target, snippet(lang));
  const receiver = await runSnippet(command, target, secret);
  running.push(receiver.proc);
  expect(
    (await request(t.app).put(`/api/admin/webhooks/${webhook.id}`).set('Authorization', admin).send({ url: receiver.url })).status,
  ).toBe(200);

  const invited = await request(t.app)
    .post('/api/users')
    .set('Authorization', admin)
    .send({ email: uniqueEmail('doc'), first_name: 'D', last_name: 'O' });
  expect(invited.status).toBe(201);
  const userId = invited.body.user.id as string;
  const event = await (async () => {
    await t.ctx.events.idle?.();
    return t.db('audit_events').where({ type: 'user.created', subject_id: userId }).first();
  })();
  for (let i = 0; i < 300 && !receiver.output().includes(`${event.id} user.created ${userId}`); i++)
    await new Promise((r) => setTimeout(r, 100));
  expect(receiver.output()).toContain(`${event.id} user.created ${userId}`);
  // The receiver prints before the server has recorded its answer.
  const recorded = () => t.db('webhook_deliveries').where({ subscription_id: webhook.id, event_id: event.id }).first();
  for (let i = 0; i < 300 && (await recorded())?.status === 'pending'; i++) await new Promise((r) => setTimeout(r, 50));
  expect(await recorded()).toMatchObject({ status: 'delivered', last_response_status: 204 });

  // Forged: signed with another secret; stale: signed correctly 10 minutes ago; tampered: body changed after signing.
  const body = JSON.stringify({ type: 'user.deactivated', timestamp: new Date().toISOString(), data: { subject_id: 'x' } });
  const now = new Date();
  const old = new Date(Date.now() - 10 * 60_000);
  const other = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const attempts = [
    { ts: now, sig: signatureHeader([other], 'forged-1', now, body), body },
    { ts: old, sig: signatureHeader([secret], 'stale-1', old, body), body },
    { ts: now, sig: signatureHeader([secret], 'tampered-1', now, body), body: body.replace('x', 'y') },
  ];
  for (const [i, a] of attempts.entries()) {
    const id = ['forged-1', 'stale-1', 'tampered-1'][i]!;
    const res = await fetch(receiver.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(a.ts.getTime() / 1000)),
        'webhook-signature': a.sig,
      },
      body: a.body,
    });
    expect([id, res.status]).toEqual([id, 401]);
  }
  // And a correctly signed one with the same helper is accepted (the refusals above are about the signature only).
  const good = await fetch(receiver.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': 'good-1',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signatureHeader([other, secret], 'good-1', now, body),
    },
    body,
  });
  expect(good.status).toBe(204);
  expect(receiver.output()).not.toMatch(/forged-1|stale-1|tampered-1/);
});
