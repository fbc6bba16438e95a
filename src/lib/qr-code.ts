/**
 * An SVG QR code of `text` (the authenticator-app enrolment on /account). qrcode is loaded with the first code, not
 * at start (issue 10: nothing loaded that a request has not needed yet).
 */
export async function qrCodeSvg(text: string): Promise<string> {
  const QRCode: typeof import('qrcode') = require('qrcode');
  return QRCode.toString(text, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
}
