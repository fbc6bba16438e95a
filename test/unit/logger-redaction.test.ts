import { Writable } from 'node:stream';
import pino from 'pino';
import { LOG_REDACT_PATHS } from '../../src/lib/logger';

/** Credentials never reach the log, whatever object they are nested in (docs/security.md). */
function logged(obj: Record<string, unknown>): string {
  let out = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      out += String(chunk);
      done();
    },
  });
  pino({ level: 'info', redact: { paths: LOG_REDACT_PATHS, remove: true } }, sink).info(obj, 'line');
  return out;
}

test.each([
  'password',
  'client_secret',
  'secret',
  'token',
  'refresh_token',
  'access_token',
  'code',
  'code_verifier',
  'registration_access_token',
  'initial_access_token',
])('%s nested in a logged object is removed', (key) => {
  const line = logged({ body: { [key]: 'do-not-log-me', kept: 'visible' } });
  expect(line).not.toContain('do-not-log-me');
  expect(line).toContain('visible');
});
