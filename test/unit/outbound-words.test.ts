import { isValidationKey, messagesFor, validationText } from '../../src/i18n';
import { checkOutboundUrl, OutboundRefused } from '../../src/lib/outbound-http';
import { checkRedirectUri } from '../../src/lib/redirect-uri';

/**
 * lib/outbound-http.ts may not import the catalogues, so its refusals name their catalogue key (`said`): the key's
 * English sentence must be the refusal's message word for word, or the console would say something else than the API.
 */
test.each([
  ['not a url', { allowPrivate: false }],
  ['ftp://files.example.com/x', { allowPrivate: false }],
  ['http://files.example.com/x', { allowPrivate: false }],
  ['https://user:pw@files.example.com/x', { allowPrivate: false }],
  ['https://10.0.0.1/x', { allowPrivate: false }],
  ['https://127.0.0.1:8080/x', { allowPrivate: true, refuseAddress: () => true }],
])('the refusal of %s says its catalogue key in English', (url, policy) => {
  let refused: unknown;
  try {
    checkOutboundUrl(url, { timeoutMs: 1000, maxBytes: 1000, ...policy });
  } catch (err) {
    refused = err;
  }
  expect(refused).toBeInstanceOf(OutboundRefused);
  const said = refused instanceof OutboundRefused ? refused.said : undefined;
  expect(said && isValidationKey(said.key)).toBe(true);
  if (refused instanceof OutboundRefused && said && isValidationKey(said.key)) {
    expect(validationText(messagesFor('en'), said.key, said.params)).toBe(refused.message);
    expect(validationText(messagesFor('de'), said.key, said.params)).not.toBe(refused.message);
  }
});

test.each([
  '',
  'https://app.example.com/cb#x',
  'https://*.example.com/cb',
  'ftp://x/cb',
  'https://u@app.example.com/cb',
  'http://app.example.com/cb',
  'com.example:cb',
])('the redirect URI refusal of %p says its catalogue key in English', (uri) => {
  const check = checkRedirectUri(uri, { allowPrivateUse: true });
  expect(check.ok).toBe(false);
  if (!check.ok) {
    expect(isValidationKey(check.said.key)).toBe(true);
    expect(validationText(messagesFor('en'), check.said.key, check.said.params)).toBe(check.reason);
    expect(validationText(messagesFor('de'), check.said.key, check.said.params)).not.toBe(check.reason);
  }
});
