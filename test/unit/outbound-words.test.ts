import { isValidationKey, messagesFor, validationText } from '../../src/i18n';
import { checkOutboundUrl, OutboundRefused } from '../../src/lib/outbound-http';

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
