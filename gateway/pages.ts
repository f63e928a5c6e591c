/**
 * Public pages (the proof approval page): declared by their services' contracts, served here
 * with no credential and forwarded to the owning service's internal path with a signed context
 * that names the visitor (its address, as trusted proxies say it; its browser) and the gateway's
 * public address.
 *
 * What the gateway itself guards, before the service sees anything: the token first, checked
 * with the page's link key (`shared/link_token.ts`). A token that does not verify (forged,
 * mistyped, cut short) is a failed look-up of the visitor's address group, counted in memory
 * like a failed credential (failed_lookup_limiter.ts, a bucket of its own): beyond the bound
 * that address gets 429 for such tokens, and only for them. A token that verifies is never
 * refused for its address, so nobody's guessing (behind the same proxy, say) locks a customer
 * out; its link is limited instead, per method, by the page's `requestsPerMinutePerLink` in the
 * shared buckets every replica takes from. Then a small body limit, a form post whose Origin is
 * another site (cross-site form posts), and every error as a short HTML page, since a person
 * reads it in a browser.
 */
import type { Context, Hono } from "hono";
// The page's path holds the link's token: Deno's own `fetch` would record it whole in its client
// span (`url.full`) with OTEL_DENO=true; undici's, over a socket of its own, is not traced.
import { fetch as undiciFetch } from "undici";
import { SERVICE_CONTRACTS } from "@printshop/shared/contracts/platform";
import type { PageSpec } from "@printshop/shared/contracts";
import { type Html, html } from "@printshop/shared/html";
import {
  type ContextKey,
  INTERNAL_CONTEXT_HEADER,
  PLATFORM_ORGANIZATION_ID,
  signInternalContext,
} from "@printshop/shared/internal-context";
import { ApiError } from "@printshop/shared/http";
import { type ServiceName, toHonoPath } from "@printshop/shared/routes";
import { deriveLinkKey, type LinkKey, verifyLinkToken } from "@printshop/shared/link-token";
import type { RateLimiter } from "./rate_limiter.ts";
import { readLimitedBody } from "./body.ts";
import { FailedLookupLimiter } from "./failed_lookup_limiter.ts";
import { addressGroup } from "./domain/address_group.ts";
import { retryAfterSeconds } from "./domain/token_bucket.ts";

const untracedFetch = undiciFetch as unknown as typeof fetch;

/** A page and the service that renders it. */
interface PublicPage extends PageSpec {
  name: string;
  service: ServiceName;
}

export const PUBLIC_PAGES: readonly PublicPage[] = SERVICE_CONTRACTS.flatMap((contract) =>
  Object.entries(contract.pages).map(([name, page]) => ({
    ...page,
    name,
    service: contract.service,
  }))
);

/** Request headers a page's service sees: what a form post and its checks need. */
const FORWARDED_REQUEST_HEADERS = ["content-type", "cookie", "sec-fetch-site", "accept-language"];
/** What the service's answer may set in the visitor's browser. */
const FORWARDED_RESPONSE_HEADERS = [
  "content-type",
  "content-security-policy",
  "referrer-policy",
  "x-content-type-options",
  "x-frame-options",
  "cache-control",
  "location",
  "set-cookie",
];

/** The gateway's own page answers: as strict as the service's, no style beyond the defaults. */
const ERROR_PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
};

function errorPage(
  status: number,
  title: string,
  text: string,
  extra: Record<string, string> = {},
): Response {
  const body: Html = html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>${title}</title>
      </head>
      <body>
        <h1>${title}</h1>
        <p>${text}</p>
      </body>
    </html>
  `;
  return new Response(body.toString(), { status, headers: { ...ERROR_PAGE_HEADERS, ...extra } });
}

/** Whether an Origin header names `host` (an opaque origin, "null", never does). */
function sameHost(origin: string, host: string): boolean {
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

export interface PageDeps {
  urls: Record<ServiceName, string>;
  contextKey: ContextKey;
  rateLimiter: RateLimiter;
  timeoutMs: number;
  /** Where customers reach the gateway. */
  publicUrl: () => string;
  /** Who the visitor is: its connection's address, and the request's (RequestClient). */
  client: (c: Context) => { connection: string | null; request: string | null };
  fetch?: typeof fetch;
}

/** What one page's requests share: its link key, and the failed look-ups of every page. */
interface PageGuard {
  linkKey: LinkKey;
  failedLookups: FailedLookupLimiter;
}

/** Registers every declared page on the gateway's app. */
export function addPublicPages(app: Hono, deps: PageDeps): void {
  // Failed token look-ups, apart from failed credentials: guessing links locks no API client out.
  const failedLookups = new FailedLookupLimiter();
  for (const page of PUBLIC_PAGES) {
    const guard: PageGuard = {
      linkKey: deriveLinkKey(deps.contextKey.secret, page.linkTokenLabel),
      failedLookups,
    };
    app.on([...page.methods], toHonoPath(page.path), async (c) => {
      try {
        return await forward(c, page, guard, deps);
      } catch (error) {
        if (error instanceof ApiError && error.code === "payload_too_large") {
          return errorPage(413, "That was too much", "The form was larger than this page takes.");
        }
        throw error;
      }
    });
  }
}

async function forward(
  c: Context,
  page: PublicPage,
  guard: PageGuard,
  deps: PageDeps,
): Promise<Response> {
  const client = deps.client(c);
  // Guessing is counted by connection; the evidence records who asked, as proxies say it.
  const group = addressGroup(client.connection);
  const token = c.req.param("token") ?? "";
  const linkId = verifyLinkToken(guard.linkKey, token);
  if (linkId === null) {
    const retryAfter = guard.failedLookups.take(group);
    if (retryAfter !== null) {
      return errorPage(
        429,
        "Too many invalid links",
        "Too many links that are not valid were opened from your network. Open the link " +
          "from your email exactly as it is; it still works.",
        { "retry-after": String(retryAfter) },
      );
    }
    // Still forwarded: the service says what is wrong in the page's own words, and reads
    // nothing to say it (it checks the token the same way).
  } else {
    const method = c.req.method === "POST" ? "POST" : "GET";
    const policy = { requestsPerMinute: page.requestsPerMinutePerLink[method] };
    const bucket = await deps.rateLimiter.take(`page:${page.name}:${method}:${linkId}`, policy);
    if (!bucket.admitted) {
      const seconds = retryAfterSeconds(policy, bucket.tokens);
      return errorPage(
        429,
        "Too many requests",
        `This link was opened too often in the last minute. Wait ${seconds} second${
          seconds === 1 ? "" : "s"
        } and try again.`,
        { "retry-after": String(seconds) },
      );
    }
  }
  if (c.req.method === "POST") {
    // A browser names the page a form was posted from; another site's form is refused here.
    // The request's own URL is built from its Host header, as the browser addressed it.
    const origin = c.req.header("origin");
    if (origin !== undefined && !sameHost(origin, new URL(c.req.url).host)) {
      return errorPage(
        403,
        "This form came from another site",
        "Open the link from your email and decide on that page.",
      );
    }
  }
  const body = await readLimitedBody(c.req.raw, page.maxBodyBytes);
  const target = page.internalPath.replace("{token}", encodeURIComponent(token));
  const headers = new Headers();
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = c.req.header(name);
    if (value !== undefined) headers.set(name, value);
  }
  const requestId = c.get("requestId") as string;
  headers.set("x-request-id", requestId);
  headers.set(
    INTERNAL_CONTEXT_HEADER,
    await signInternalContext(deps.contextKey, c.req.method, target, {
      organizationId: PLATFORM_ORGANIZATION_ID,
      credentialKind: "tenant_key",
      credentialId: `page:${page.name}`,
      scopes: [page.internalScope],
      requestId,
      issuedAt: Date.now(),
      publicUrl: deps.publicUrl(),
      client: {
        address: client.request,
        userAgent: c.req.header("user-agent")?.slice(0, 500) ?? null,
      },
    }),
  );
  let upstream: Response;
  try {
    upstream = await (deps.fetch ?? untracedFetch)(`${deps.urls[page.service]}${target}`, {
      method: c.req.method,
      headers,
      body: body && body.byteLength > 0 ? body : undefined,
      redirect: "manual",
      signal: AbortSignal.timeout(deps.timeoutMs),
    });
  } catch {
    return errorPage(
      503,
      "This page is not available right now",
      "Please try again in a few minutes.",
      { "retry-after": "30" },
    );
  }
  // A signed token naming no link (deleted, or signed with a leaked key) was a failed look-up too.
  if (linkId !== null && upstream.status === 404) guard.failedLookups.take(group);
  if (upstream.status >= 500) {
    await upstream.body?.cancel();
    return errorPage(
      502,
      "Something went wrong",
      `Nothing was recorded. Please try again in a few minutes (reference ${requestId}).`,
    );
  }
  const responseHeaders = new Headers();
  for (const name of FORWARDED_RESPONSE_HEADERS) {
    const value = upstream.headers.get(name);
    if (value !== null) responseHeaders.set(name, value);
  }
  return new Response(upstream.body, { status: upstream.status, headers: responseHeaders });
}
