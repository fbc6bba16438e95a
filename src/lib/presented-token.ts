/** The scheme and token of an `Authorization: Bearer|DPoP <token>` header (RFC 6750 §2.1, RFC 9449 §7.1). */
export interface PresentedToken {
  scheme: 'bearer' | 'dpop';
  token: string;
}

export function presentedTokenOf(authorization: string | undefined): PresentedToken | undefined {
  if (!authorization) return undefined;
  const match = /^(Bearer|DPoP)\s+(\S+)\s*$/i.exec(authorization);
  if (!match) return undefined;
  return { scheme: match[1].toLowerCase() === 'dpop' ? 'dpop' : 'bearer', token: match[2] };
}
