/**
 * `createPrintShopClient`: openapi-fetch's typed client of the whole API (every path, its
 * parameters, body and answers per status come from the generated `schema.ts`), sending the
 * tenant key, an `Idempotency-Key` on every write and retrying what is worth retrying
 * (retry.ts), plus `paginate` (paginate.ts).
 */
import createClient, { type Client } from "openapi-fetch";
import { createPaginate, type Paginate } from "./paginate.ts";
import { type FetchLike, type RetryOptions, withRetries } from "./retry.ts";
import type { paths } from "./schema.ts";

export interface PrintShopClientOptions extends RetryOptions {
  /** The gateway's origin, e.g. `https://api.example.com` (paths start with `/v1`). */
  baseUrl: string;
  /**
   * A tenant API key (`psk_…`), sent as `X-API-Key`. The gateway refuses a tenant key sent as
   * `Authorization: Bearer` (401), so it is never sent that way.
   */
  apiKey: string;
  /** Sends each request; `globalThis.fetch` by default (looked up per request). */
  fetch?: FetchLike;
  /**
   * Headers for every request, e.g. a partner's `X-API-Secret`, `Authorization: Bearer <JWT>`
   * and `X-Service-Organization-Id` (with `apiKey` as its client id).
   */
  headers?: Record<string, string>;
}

/** The openapi-fetch client of the API, plus `paginate`. */
export type PrintShopClient = Client<paths> & {
  /** Every row of a list, page after page: `for await (const q of client.paginate("/v1/quotes"))`. */
  paginate: Paginate;
};

export function createPrintShopClient(options: PrintShopClientOptions): PrintShopClient {
  const send: FetchLike = options.fetch ?? ((request) => globalThis.fetch(request));
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    fetch: withRetries(send, options),
    headers: { ...options.headers, "X-API-Key": options.apiKey },
  });
  return Object.assign(client, { paginate: createPaginate(client) });
}
