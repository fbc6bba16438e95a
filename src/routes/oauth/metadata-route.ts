import type { z } from 'zod';
import type { Config } from '../../config';
import type { SettingValues } from '../../declarations/settings';
import { derived } from '../../services/settings/live-settings';
import { PrebuiltJson, route, type DeclaredRoute } from '../route';
import type { RouteDeps } from '../types';

/**
 * A server metadata document (RFC 8414, OpenID Connect Discovery): public, cacheable for five minutes, readable
 * cross-origin, and rebuilt when the settings change (registration_endpoint, PAR, …), not per request.
 */
export function metadataRoute(
  deps: RouteDeps,
  doc: { path: string; summary: string; tags: readonly string[]; description: string; schema: z.ZodType },
  build: (config: Config, settings: Readonly<SettingValues>) => object,
): DeclaredRoute {
  const document = derived(deps.ctx.settings, (s) => new PrebuiltJson(build(deps.ctx.config, s.values)));
  return route(
    {
      method: 'get',
      path: doc.path,
      summary: doc.summary,
      tags: doc.tags,
      auth: 'none',
      cacheControl: 'public, max-age=300',
      cors: 'public',
      response: { description: doc.description, schema: doc.schema },
    },
    () => document(),
  );
}
