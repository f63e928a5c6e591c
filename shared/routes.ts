import type { z } from "zod";
import type { Scope } from "./scopes.ts";
import {
  CreateQuoteBody,
  CreateQuoteGroupBody,
  ListQuotesQuery,
  Quote,
  QuoteFacets,
  QuoteGroup,
} from "./contracts/quotes.ts";
import { Limits, Me } from "./contracts/account.ts";
import { page } from "./contracts/common.ts";

export const SERVICES = ["quotes", "catalogue", "crm", "proofs", "webhooks"] as const;
export type ServiceName = typeof SERVICES[number];
export type Owner = ServiceName | "gateway";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface RouteDef {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI-style template with `{name}` parameters; every `{…}` is a UUID. */
  path: string;
  service: Owner;
  /** Required scope; null means any valid credential. */
  scope: Scope | null;
  summary: string;
  tag: string;
  body?: z.ZodType;
  query?: z.ZodType;
  /** Schema of the success envelope's `data`, keyed by HTTP status. */
  responses: Partial<Record<200 | 201 | 204, z.ZodType>>;
}

/**
 * Every public operation, its owner and its scope. The gateway routes and checks scopes from
 * this table, services register scope guards from it, a test proves each service serves exactly
 * its rows, and the OpenAPI document is generated from it.
 */
export const ROUTES: readonly RouteDef[] = [
  {
    operationId: "getMe",
    method: "GET",
    path: "/v1/me",
    service: "gateway",
    scope: null,
    summary: "The calling credential: organisation, credential kind and id, granted scopes",
    tag: "Account",
    responses: { 200: Me },
  },
  {
    operationId: "getLimits",
    method: "GET",
    path: "/v1/reference/limits",
    service: "gateway",
    scope: null,
    summary: "Live limits: page size, bulk rows, body size, idempotency key, rate limit",
    tag: "Account",
    responses: { 200: Limits },
  },
  {
    operationId: "createQuote",
    method: "POST",
    path: "/v1/quotes",
    service: "quotes",
    scope: "quotes.write",
    summary: "Create a quote in draft",
    tag: "Quotes",
    body: CreateQuoteBody,
    responses: { 201: Quote },
  },
  {
    operationId: "listQuotes",
    method: "GET",
    path: "/v1/quotes",
    service: "quotes",
    scope: "quotes.read",
    summary: "List quotes with their groups, filtered, sorted and paged",
    tag: "Quotes",
    query: ListQuotesQuery,
    responses: { 200: page(Quote) },
  },
  {
    operationId: "getQuoteFacets",
    method: "GET",
    path: "/v1/quotes/facets",
    service: "quotes",
    scope: "quotes.read",
    summary: "Distinct values to filter the quote list by",
    tag: "Quotes",
    responses: { 200: QuoteFacets },
  },
  {
    operationId: "getQuote",
    method: "GET",
    path: "/v1/quotes/{quoteId}",
    service: "quotes",
    scope: "quotes.read",
    summary: "Read one quote with its groups",
    tag: "Quotes",
    responses: { 200: Quote },
  },
  {
    operationId: "createQuoteGroup",
    method: "POST",
    path: "/v1/quotes/{quoteId}/groups",
    service: "quotes",
    scope: "quotes.write",
    summary: "Add a group to a quote",
    tag: "Quotes",
    body: CreateQuoteGroupBody,
    responses: { 201: QuoteGroup },
  },
];

export function routesOf(owner: Owner): RouteDef[] {
  return ROUTES.filter((r) => r.service === owner);
}

/** `/v1/quotes/{quoteId}` → `/v1/quotes/:quoteId` for Hono. */
export function toHonoPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ":$1");
}

export interface RouteMatch {
  route: RouteDef;
  params: Record<string, string>;
}

interface CompiledRoute {
  route: RouteDef;
  segments: string[];
}

/**
 * Matches a concrete path against the table. Literal segments beat parameters, so
 * `/v1/quotes/facets` is never read as a quote id.
 */
export class RouteTable {
  #compiled: CompiledRoute[];

  constructor(routes: readonly RouteDef[] = ROUTES) {
    this.#compiled = routes.map((route) => ({ route, segments: route.path.split("/") }));
  }

  match(method: string, path: string): RouteMatch | null {
    const parts = path.split("/");
    let best: { match: RouteMatch; literals: number } | null = null;
    for (const { route, segments } of this.#compiled) {
      if (route.method !== method || segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let literals = 0;
      let ok = true;
      for (let i = 0; i < segments.length; i++) {
        const seg = segments[i]!;
        const part = parts[i]!;
        if (seg.startsWith("{")) {
          if (part === "") {
            ok = false;
            break;
          }
          const decoded = safeDecode(part);
          if (decoded === null) {
            ok = false;
            break;
          }
          params[seg.slice(1, -1)] = decoded;
        } else if (seg === part) {
          literals++;
        } else {
          ok = false;
          break;
        }
      }
      if (ok && (!best || literals > best.literals)) best = { match: { route, params }, literals };
    }
    return best?.match ?? null;
  }
}

function safeDecode(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}
