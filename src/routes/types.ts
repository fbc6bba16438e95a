import type { Authenticate } from '../middleware/authenticate';
import type { ServiceContext } from '../services/context';

/** What every router factory receives. */
export interface RouteDeps {
  ctx: ServiceContext;
  authenticate: Authenticate;
}
