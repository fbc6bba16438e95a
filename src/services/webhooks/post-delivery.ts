import type { DeliveryAttemptOutcome } from '../../db/repositories/deliveries';
import {
  outboundRequest,
  OutboundRefused,
  type OutboundClient,
  type OutboundPolicy,
  type OutboundRequest,
  type OutboundResponse,
} from '../../lib/outbound-http';
import type { ServiceContext } from '../context';
import { isDelivered, retryDelaySeconds, RETRY_DELAYS_SECONDS, webhookAddressRules, webhookOutboundPolicy } from './webhook-policy';

/** How the two outbound deliveries (webhooks, back-channel logout) are attempted. */
export interface DeliveryOptions {
  /** The retry schedule; CONTRACT §17's unless a test shortens it. */
  retryDelaysSeconds?: readonly number[];
  /** Outbound policy overrides (tests: a resolver). */
  outbound?: Partial<OutboundPolicy>;
  /** Kept-alive connections to receivers (the worker's); one connection per attempt without it. */
  client?: OutboundClient;
}

/**
 * One attempt of a delivery: POSTs `request` to `url` under the webhooks' address rules (`refuse` may refuse the call
 * first by throwing OutboundRefused). A refused call is a failed attempt; whether another follows comes from the retry
 * schedule and the attempts made before this one. `refusal`: why the call was refused (null when it was answered).
 */
export async function postDelivery(
  ctx: ServiceContext,
  url: string,
  request: OutboundRequest,
  options: DeliveryOptions,
  attemptsBefore: number,
  refuse?: () => void,
): Promise<{ outcome: DeliveryAttemptOutcome; response: OutboundResponse | null; refusal: string | null }> {
  let response: OutboundResponse | null = null;
  let refusal: string | null = null;
  try {
    refuse?.();
    const policy = webhookOutboundPolicy(webhookAddressRules(ctx), url, options.outbound);
    response = options.client ? await options.client.request(url, request, policy) : await outboundRequest(url, request, policy);
  } catch (err) {
    if (!(err instanceof OutboundRefused)) throw err;
    refusal = `${err.reason}: ${err.message}`;
  }
  const responseStatus = response ? response.status : null;
  const delivered = isDelivered(responseStatus);
  const retryInSeconds = delivered ? null : retryDelaySeconds(attemptsBefore + 1, options.retryDelaysSeconds ?? RETRY_DELAYS_SECONDS);
  return {
    outcome: {
      status: delivered ? 'delivered' : retryInSeconds === null ? 'failed' : 'pending',
      responseStatus,
      error: refusal ?? (delivered ? null : `HTTP ${responseStatus}`),
      retryInSeconds,
    },
    response,
    refusal,
  };
}
