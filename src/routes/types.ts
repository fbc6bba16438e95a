/** Where router factories take their dependencies' type from (declared beside the route declaration, src/routes/route.ts). */
export type { RouteDeps } from './route';
