import { convert, date, dateOrNull, flag, hidden, num, orNull, recordWriter, rowMapper, same, snakeCase, str } from '../../src/db/rows';

describe('db/rows: one column map gives the Row, the record and the mapper', () => {
  const columns = {
    id: str,
    userId: same<string>(),
    previousSecretExpiresAt: dateOrNull,
    createdAt: date,
    counter: num,
    browserSessionId: orNull<string>(),
    needsConfirmation: flag,
    amr: convert((amr: string[] | null) => amr ?? ['pwd']),
  };
  const toRow = rowMapper(columns);

  test('camelCase fields come from snake_case columns, each converted as declared', () => {
    const created = new Date('2026-01-02T03:04:05Z');
    const row = toRow({
      id: 42,
      user_id: 'u1',
      previous_secret_expires_at: null,
      created_at: created,
      counter: '7',
      browser_session_id: undefined,
      needs_confirmation: null,
      amr: null,
    });
    expect(row).toEqual({
      id: '42',
      userId: 'u1',
      previousSecretExpiresAt: null,
      createdAt: created,
      counter: 7,
      browserSessionId: null,
      needsConfirmation: false,
      amr: ['pwd'],
    });
    expect(Object.keys(row)).toEqual(Object.keys(columns));
    // a timestamp is a fresh Date, never the record's own object
    expect(row.createdAt).not.toBe(created);
  });

  test('timestamps given as text become Dates; present values pass through', () => {
    const row = toRow({
      id: '1',
      user_id: 'u',
      previous_secret_expires_at: '2026-05-01T00:00:00.000Z' as unknown as Date,
      created_at: '2026-04-01T00:00:00.000Z' as unknown as Date,
      counter: 3,
      browser_session_id: 'b',
      needs_confirmation: true,
      amr: ['pwd', 'otp'],
    });
    expect(row.previousSecretExpiresAt?.toISOString()).toBe('2026-05-01T00:00:00.000Z');
    expect(row.createdAt.toISOString()).toBe('2026-04-01T00:00:00.000Z');
    expect(row).toMatchObject({ counter: 3, browserSessionId: 'b', needsConfirmation: true, amr: ['pwd', 'otp'] });
  });

  test('the writer names the given fields by their columns and leaves out undefined ones', () => {
    const toRecord = recordWriter(columns);
    expect(toRecord({ userId: 'u2', browserSessionId: null, counter: undefined })).toEqual({ user_id: 'u2', browser_session_id: null });
  });

  test('a hidden column is in the record and never in the Row', () => {
    const secretColumns = { id: same<string>(), tokenHash: hidden<string>(), createdAt: date };
    const created = new Date('2026-01-02T03:04:05Z');
    const row = rowMapper(secretColumns)({ id: 't1', token_hash: 'sha256-of-the-token', created_at: created });
    expect(row).toEqual({ id: 't1', createdAt: created });
    expect(Object.keys(row)).toEqual(['id', 'createdAt']);
    expect(recordWriter(secretColumns)({ id: 't2' })).toEqual({ id: 't2' });
  });

  test('snakeCase', () => {
    expect(snakeCase('previousSecretExpiresAt')).toBe('previous_secret_expires_at');
    expect(snakeCase('id')).toBe('id');
  });
});
