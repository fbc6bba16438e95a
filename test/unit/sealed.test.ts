import { createSealer, SealedValueError } from '../../src/lib/sealed';

describe('lib/sealed', () => {
  const sealer = createSealer('k'.repeat(40));

  test('opens what it sealed, with the same purpose', () => {
    const sealed = sealer.seal('JBSWY3DPEHPK3PXP', 'totp');
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    expect(sealer.open(sealed, 'totp')).toBe('JBSWY3DPEHPK3PXP');
  });

  test('two seals of one value differ (fresh IV)', () => {
    expect(sealer.seal('x', 'p')).not.toBe(sealer.seal('x', 'p'));
  });

  test('refuses another purpose, another key, and tampering', () => {
    const sealed = sealer.seal('secret', 'totp');
    expect(() => sealer.open(sealed, 'signing-key')).toThrow(SealedValueError);
    expect(() => createSealer('z'.repeat(40)).open(sealed, 'totp')).toThrow(SealedValueError);
    const parts = sealed.split('.');
    parts[2] = Buffer.from('tampered').toString('base64url');
    expect(() => sealer.open(parts.join('.'), 'totp')).toThrow(SealedValueError);
    expect(() => sealer.open('garbage', 'totp')).toThrow(SealedValueError);
  });
});
