import { SUPER_ADMIN } from '../../services/rbac-policy';
import * as apps from '../../services/saml/saml-apps.service';
import { rotateSamlKey } from '../../services/saml/saml-keys.service';
import { idpDescription } from '../../services/saml/saml-metadata.service';
import type { ServiceContext } from '../../services/context';
import { endpointsWith, idNotFound, removed, servingRouter } from '../route';
import { samlAppBody, samlAppEnvelope, samlAppIdParams, samlAppsBody, samlKeyRotatedBody } from '../../wire/saml/saml-apps.schemas';
import { presentSamlApp } from './saml.presenters';

const READ = { auth: 'user', permission: 'oauth_clients:read' } as const;
const WRITE = { auth: 'user', permission: 'oauth_clients:write' } as const;
const byId = { params: samlAppIdParams, invalid: idNotFound('SAML application') };
const read = endpointsWith(READ);
const write = endpointsWith(WRITE);
const readApp = endpointsWith({ ...READ, ...byId });
const writeApp = endpointsWith({ ...WRITE, ...byId });
const one = { description: '{ app }', schema: samlAppEnvelope };
const present = (ctx: ServiceContext, a: Parameters<typeof presentSamlApp>[1]) => presentSamlApp(ctx.config, a);

/**
 * SAML applications (CONTRACT §19), permission oauth_clients:read / oauth_clients:write. Created from fields or from
 * the SP's metadata (pasted as metadata_xml, or fetched from an https metadata_url through the outbound-HTTP rules).
 * The console's SAML pages are built from these same endpoints (src/console/saml/saml.console.ts).
 */
export const samlAppsApi = {
  list: read.get(
    '/saml-apps',
    {
      summary: 'List SAML applications, with the IdP metadata URL and certificates to give them',
      response: { description: '{ apps, idp }', schema: samlAppsBody },
    },
    async (_input, ctx) => ({ apps: (await apps.listApps(ctx)).map((a) => present(ctx, a)), idp: await idpDescription(ctx) }),
  ),
  create: write.post(
    '/saml-apps',
    {
      summary: 'Add a SAML application (from fields, or from the SP metadata: metadata_xml or an https metadata_url)',
      noStore: true,
      body: samlAppBody,
      response: { status: 201, ...one },
      errors: [409],
    },
    async ({ body }, ctx) => ({ app: present(ctx, await apps.createApp(ctx, body)) }),
  ),
  /**
   * The signing key is the server's, shared by every SAML application: rotating it is super_admin's, like the OpenID
   * Connect signing key on the console and `npm run admin -- rotate-saml-key`.
   */
  rotateKey: endpointsWith({ auth: 'user', role: SUPER_ADMIN }).post(
    '/saml-apps/signing-key/rotate',
    {
      summary: 'Rotate the SAML signing key (the old certificate stays in the metadata for 30 days)',
      response: { description: '{ id, retired, certificates }', schema: samlKeyRotatedBody },
    },
    async (_input, ctx) => {
      const { id, retired } = await rotateSamlKey(ctx);
      return { id, retired, certificates: (await idpDescription(ctx)).certificates };
    },
  ),
  get: readApp.get('/saml-apps/:appId', { summary: 'SAML application detail', response: one }, async ({ params }, ctx) => ({
    app: present(ctx, await apps.getApp(ctx, params.appId)),
  })),
  update: writeApp.put(
    '/saml-apps/:appId',
    {
      summary: 'Replace a SAML application (same body as POST; omitted fields take their defaults)',
      noStore: true,
      body: samlAppBody,
      response: one,
      errors: [409],
    },
    async ({ params, body }, ctx) => ({ app: present(ctx, await apps.updateApp(ctx, params.appId, body)) }),
  ),
  remove: writeApp.delete(
    '/saml-apps/:appId',
    { summary: 'Delete a SAML application', response: removed('Deleted') },
    async ({ params }, ctx) => apps.removeApp(ctx, params.appId),
  ),
};

export const createSamlAppsRouter = servingRouter(samlAppsApi, { tags: ['SAML'] });
