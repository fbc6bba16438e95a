import type { z } from 'zod';
import { badRequest, notFound } from '../../errors';
import { SUPER_ADMIN } from '../../services/rbac-policy';
import * as apps from '../../services/saml/saml-apps.service';
import { rotateSamlKey } from '../../services/saml/saml-keys.service';
import { idpDescription } from '../../services/saml/saml-metadata.service';
import type { ServiceContext } from '../../services/context';
import { declareRouter, endpoint, serve } from '../route';
import type { RouteDeps } from '../types';
import { samlAppBody, samlAppEnvelope, samlAppIdParams, samlAppsBody, samlKeyRotatedBody } from './saml-apps.schemas';
import { presentSamlApp } from './saml.presenters';

const read = { auth: 'user', permission: 'oauth_clients:read' } as const;
const write = { auth: 'user', permission: 'oauth_clients:write' } as const;
const present = (ctx: ServiceContext, a: Parameters<typeof presentSamlApp>[1]) => presentSamlApp(ctx.config, a);
/** A malformed id is an unknown application (404), as for an id that was never issued; a bad body is the usual 400. */
const appNotFound = (issues: z.core.$ZodIssue[], where: 'params' | 'query' | 'body') =>
  where === 'params'
    ? notFound('SAML application')
    : badRequest(
        'Body is invalid',
        issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message })),
      );

/**
 * SAML applications (CONTRACT §19), permission oauth_clients:read / oauth_clients:write. Created from fields or from
 * the SP's metadata (pasted as metadata_xml, or fetched from an https metadata_url through the outbound-HTTP rules).
 * The console's SAML pages are built from these same endpoints (src/console/saml/saml.console.ts).
 */
export const samlAppsApi = {
  list: endpoint(
    {
      ...read,
      method: 'get',
      path: '/saml-apps',
      summary: 'List SAML applications, with the IdP metadata URL and certificates to give them',
      response: { description: '{ apps, idp }', schema: samlAppsBody },
    },
    async (_input, ctx) => ({ apps: (await apps.listApps(ctx)).map((a) => present(ctx, a)), idp: await idpDescription(ctx) }),
  ),
  create: endpoint(
    {
      ...write,
      method: 'post',
      path: '/saml-apps',
      summary: 'Add a SAML application (from fields, or from the SP metadata: metadata_xml or an https metadata_url)',
      noStore: true,
      body: samlAppBody,
      response: { status: 201, description: '{ app }', schema: samlAppEnvelope },
      errors: [409],
    },
    async ({ body }, ctx) => ({ app: present(ctx, await apps.createApp(ctx, body)) }),
  ),
  /**
   * The signing key is the server's, shared by every SAML application: rotating it is super_admin's, like the OpenID
   * Connect signing key on the console and `npm run admin -- rotate-saml-key`.
   */
  rotateKey: endpoint(
    {
      auth: 'user',
      role: SUPER_ADMIN,
      method: 'post',
      path: '/saml-apps/signing-key/rotate',
      summary: 'Rotate the SAML signing key (the old certificate stays in the metadata for 30 days)',
      response: { description: '{ id, retired, certificates }', schema: samlKeyRotatedBody },
    },
    async (_input, ctx) => {
      const { id, retired } = await rotateSamlKey(ctx);
      return { id, retired, certificates: (await idpDescription(ctx)).certificates };
    },
  ),
  get: endpoint(
    {
      ...read,
      method: 'get',
      path: '/saml-apps/:appId',
      summary: 'SAML application detail',
      params: samlAppIdParams,
      invalid: appNotFound,
      response: { description: '{ app }', schema: samlAppEnvelope },
    },
    async ({ params }, ctx) => ({ app: present(ctx, await apps.getApp(ctx, params.appId)) }),
  ),
  update: endpoint(
    {
      ...write,
      method: 'put',
      path: '/saml-apps/:appId',
      summary: 'Replace a SAML application (same body as POST; omitted fields take their defaults)',
      noStore: true,
      params: samlAppIdParams,
      invalid: appNotFound,
      body: samlAppBody,
      response: { description: '{ app }', schema: samlAppEnvelope },
      errors: [409],
    },
    async ({ params, body }, ctx) => ({ app: present(ctx, await apps.updateApp(ctx, params.appId, body)) }),
  ),
  remove: endpoint(
    {
      ...write,
      method: 'delete',
      path: '/saml-apps/:appId',
      summary: 'Delete a SAML application',
      params: samlAppIdParams,
      invalid: appNotFound,
      response: { status: 204, description: 'Deleted', kind: 'empty' },
    },
    async ({ params }, ctx) => {
      await apps.removeApp(ctx, params.appId);
    },
  ),
};

export function createSamlAppsRouter(deps: RouteDeps) {
  return declareRouter(deps, serve(deps, samlAppsApi), { tags: ['SAML'] });
}
