import * as apps from '../../services/saml/saml-apps.service';
import { idpDescription } from '../../services/saml/saml-metadata.service';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { samlAppBody, samlAppEnvelope, samlAppIdParams, samlAppsBody } from './saml-apps.schemas';
import { presentSamlApp } from './saml.presenters';

/**
 * SAML applications (CONTRACT §19), permission oauth_clients:read / oauth_clients:write. Created from fields or from
 * the SP's metadata (pasted as metadata_xml, or fetched from an https metadata_url through the outbound-HTTP rules).
 */
export function createSamlAppsRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const present = (a: Parameters<typeof presentSamlApp>[1]) => presentSamlApp(ctx.config, a);
  const read = { auth: 'user', permission: 'oauth_clients:read' } as const;
  const write = { auth: 'user', permission: 'oauth_clients:write' } as const;
  return declareRouter(
    deps,
    [
      route(
        {
          ...read,
          method: 'get',
          path: '/saml-apps',
          summary: 'List SAML applications, with the IdP metadata URL and certificates to give them',
          response: { description: '{ apps, idp }', schema: samlAppsBody },
        },
        async () => ({ apps: (await apps.listApps(ctx)).map(present), idp: await idpDescription(ctx) }),
      ),
      route(
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
        async ({ body }) => ({ app: present(await apps.createApp(ctx, body)) }),
      ),
      route(
        {
          ...read,
          method: 'get',
          path: '/saml-apps/:appId',
          summary: 'SAML application detail',
          params: samlAppIdParams,
          response: { description: '{ app }', schema: samlAppEnvelope },
        },
        async ({ params }) => ({ app: present(await apps.getApp(ctx, params.appId)) }),
      ),
      route(
        {
          ...write,
          method: 'put',
          path: '/saml-apps/:appId',
          summary: 'Replace a SAML application (same body as POST; omitted fields take their defaults)',
          noStore: true,
          params: samlAppIdParams,
          body: samlAppBody,
          response: { description: '{ app }', schema: samlAppEnvelope },
          errors: [409],
        },
        async ({ params, body }) => ({ app: present(await apps.updateApp(ctx, params.appId, body)) }),
      ),
      route(
        {
          ...write,
          method: 'delete',
          path: '/saml-apps/:appId',
          summary: 'Delete a SAML application',
          params: samlAppIdParams,
          response: { status: 204, description: 'Deleted', kind: 'empty' },
        },
        async ({ params }) => {
          await apps.removeApp(ctx, params.appId);
        },
      ),
    ],
    { tags: ['SAML'] },
  );
}
