import type { Scope } from "./scopes.ts";
import {
  CreateQuoteBody,
  CreateQuoteGroupBody,
  ListQuotesQuery,
  Quote,
  QuoteFacets,
  QuoteGroup,
  QuoteStatusBody,
  UpdateQuoteBody,
} from "./contracts/quotes.ts";
import {
  CreateMarkupGroupBody,
  CreateQuoteDecorationBody,
  CreateQuoteLineBody,
  CreateQuoteVariantBody,
  CreateTaxRateBody,
  MarkupGroup,
  QuoteGroupDecoration,
  QuoteLine,
  QuoteVariant,
  ReorderBody,
  TaxRate,
  UpdateMarkupGroupBody,
  UpdateQuoteDecorationBody,
  UpdateQuoteGroupBody,
  UpdateQuoteLineBody,
  UpdateQuoteVariantBody,
} from "./contracts/quote_items.ts";
import { Limits, Me } from "./contracts/account.ts";
import {
  CreateWebhookBody,
  EventCatalogue,
  EventLogPage,
  EventLogQuery,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  UpdateWebhookBody,
  WebhookDelivery,
  WebhookSubscription,
} from "./contracts/webhooks.ts";
import { Deleted, page } from "./contracts/common.ts";
import { z } from "zod";

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
    operationId: "updateQuote",
    method: "PATCH",
    path: "/v1/quotes/{quoteId}",
    service: "quotes",
    scope: "quotes.write",
    summary: "Change a quote's own fields (references, dates, tax rate, notes)",
    tag: "Quotes",
    body: UpdateQuoteBody,
    responses: { 200: Quote },
  },
  {
    operationId: "deleteQuote",
    method: "DELETE",
    path: "/v1/quotes/{quoteId}",
    service: "quotes",
    scope: "quotes.write",
    summary: "Delete a quote with its groups and rows",
    tag: "Quotes",
    responses: { 200: Deleted },
  },
  {
    operationId: "setQuoteStatus",
    method: "POST",
    path: "/v1/quotes/{quoteId}/status",
    service: "quotes",
    scope: "quotes.write",
    summary: "Move a quote through its lifecycle (draft, sent, approved, declined, expired)",
    tag: "Quotes",
    body: QuoteStatusBody,
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
  {
    operationId: "updateQuoteGroup",
    method: "PATCH",
    path: "/v1/quote-groups/{groupId}",
    service: "quotes",
    scope: "quotes.write",
    summary: "Rename, move or flag a quote group",
    tag: "Quotes",
    body: UpdateQuoteGroupBody,
    responses: { 200: QuoteGroup },
  },
  {
    operationId: "deleteQuoteGroup",
    method: "DELETE",
    path: "/v1/quote-groups/{groupId}",
    service: "quotes",
    scope: "quotes.write",
    summary: "Delete a quote group with its lines and decorations",
    tag: "Quotes",
    responses: { 200: Deleted },
  },
  {
    operationId: "reorderQuoteGroup",
    method: "POST",
    path: "/v1/quote-groups/{groupId}/reorder",
    service: "quotes",
    scope: "quotes.write",
    summary: "Renumber a group's lines and decorations in one shared order",
    tag: "Quotes",
    body: ReorderBody,
    responses: { 200: QuoteGroup },
  },
  {
    operationId: "createQuoteLine",
    method: "POST",
    path: "/v1/quote-groups/{groupId}/lines",
    service: "quotes",
    scope: "quotes.write",
    summary: "Add a line to a group",
    tag: "Quote lines",
    body: CreateQuoteLineBody,
    responses: { 201: QuoteLine },
  },
  {
    operationId: "updateQuoteLine",
    method: "PATCH",
    path: "/v1/quote-lines/{lineId}",
    service: "quotes",
    scope: "quotes.write",
    summary: "Change a line",
    tag: "Quote lines",
    body: UpdateQuoteLineBody,
    responses: { 200: QuoteLine },
  },
  {
    operationId: "deleteQuoteLine",
    method: "DELETE",
    path: "/v1/quote-lines/{lineId}",
    service: "quotes",
    scope: "quotes.write",
    summary: "Delete a line with its variants",
    tag: "Quote lines",
    responses: { 200: Deleted },
  },
  {
    operationId: "createQuoteVariant",
    method: "POST",
    path: "/v1/quote-lines/{lineId}/variants",
    service: "quotes",
    scope: "quotes.write",
    summary: "Add a size/colour variant or a custom cost (freight) to a line",
    tag: "Quote lines",
    body: CreateQuoteVariantBody,
    responses: { 201: QuoteVariant },
  },
  {
    operationId: "updateQuoteVariant",
    method: "PATCH",
    path: "/v1/quote-variants/{variantId}",
    service: "quotes",
    scope: "quotes.write",
    summary: "Change a variant's quantity, costs or markup",
    tag: "Quote lines",
    body: UpdateQuoteVariantBody,
    responses: { 200: QuoteVariant },
  },
  {
    operationId: "deleteQuoteVariant",
    method: "DELETE",
    path: "/v1/quote-variants/{variantId}",
    service: "quotes",
    scope: "quotes.write",
    summary: "Delete a variant",
    tag: "Quote lines",
    responses: { 200: Deleted },
  },
  {
    operationId: "createQuoteDecoration",
    method: "POST",
    path: "/v1/quote-groups/{groupId}/decorations",
    service: "quotes",
    scope: "quotes.write",
    summary: "Add a decoration to a group",
    tag: "Quote decorations",
    body: CreateQuoteDecorationBody,
    responses: { 201: QuoteGroupDecoration },
  },
  {
    operationId: "updateQuoteDecoration",
    method: "PATCH",
    path: "/v1/quote-decorations/{decorationId}",
    service: "quotes",
    scope: "quotes.write",
    summary: "Change a decoration",
    tag: "Quote decorations",
    body: UpdateQuoteDecorationBody,
    responses: { 200: QuoteGroupDecoration },
  },
  {
    operationId: "deleteQuoteDecoration",
    method: "DELETE",
    path: "/v1/quote-decorations/{decorationId}",
    service: "quotes",
    scope: "quotes.write",
    summary: "Delete a decoration",
    tag: "Quote decorations",
    responses: { 200: Deleted },
  },
  {
    operationId: "createMarkupGroup",
    method: "POST",
    path: "/v1/markup-groups",
    service: "quotes",
    scope: "quotes.write",
    summary: "Create a markup group (bands of markups by quantity or setup cost)",
    tag: "Markup groups",
    body: CreateMarkupGroupBody,
    responses: { 201: MarkupGroup },
  },
  {
    operationId: "listMarkupGroups",
    method: "GET",
    path: "/v1/markup-groups",
    service: "quotes",
    scope: "quotes.read",
    summary: "List the organisation's markup groups",
    tag: "Markup groups",
    responses: { 200: z.array(MarkupGroup) },
  },
  {
    operationId: "getMarkupGroup",
    method: "GET",
    path: "/v1/markup-groups/{markupGroupId}",
    service: "quotes",
    scope: "quotes.read",
    summary: "Read one markup group",
    tag: "Markup groups",
    responses: { 200: MarkupGroup },
  },
  {
    operationId: "updateMarkupGroup",
    method: "PATCH",
    path: "/v1/markup-groups/{markupGroupId}",
    service: "quotes",
    scope: "quotes.write",
    summary: "Change a markup group; quotes re-band on their next quantity or cost change",
    tag: "Markup groups",
    body: UpdateMarkupGroupBody,
    responses: { 200: MarkupGroup },
  },
  {
    operationId: "deleteMarkupGroup",
    method: "DELETE",
    path: "/v1/markup-groups/{markupGroupId}",
    service: "quotes",
    scope: "quotes.write",
    summary: "Delete a markup group that no row uses (409 otherwise)",
    tag: "Markup groups",
    responses: { 200: Deleted },
  },
  {
    operationId: "listTaxRates",
    method: "GET",
    path: "/v1/tax-rates",
    service: "quotes",
    scope: "quotes.read",
    summary: "List tax rates; the organisation's default is GST 10 % until changed",
    tag: "Tax rates",
    responses: { 200: z.array(TaxRate) },
  },
  {
    operationId: "createTaxRate",
    method: "POST",
    path: "/v1/tax-rates",
    service: "quotes",
    scope: "quotes.write",
    summary: "Create a tax rate, optionally as the organisation's default",
    tag: "Tax rates",
    body: CreateTaxRateBody,
    responses: { 201: TaxRate },
  },
  {
    operationId: "getEventCatalogue",
    method: "GET",
    path: "/v1/reference/events",
    service: "webhooks",
    scope: null,
    summary: "Every event name a webhook can subscribe to, and how deliveries work",
    tag: "Events",
    responses: { 200: EventCatalogue },
  },
  {
    operationId: "getEventLog",
    method: "GET",
    path: "/v1/event-log",
    service: "webhooks",
    scope: null,
    summary:
      "This organisation's events in order, after a given event id; only areas the credential can read",
    tag: "Events",
    query: EventLogQuery,
    responses: { 200: EventLogPage },
  },
  {
    operationId: "listWebhooks",
    method: "GET",
    path: "/v1/webhooks",
    service: "webhooks",
    scope: "webhooks.read",
    summary: "This credential's webhook subscriptions, oldest first unless sorted otherwise",
    tag: "Webhooks",
    query: ListWebhooksQuery,
    responses: { 200: page(WebhookSubscription) },
  },
  {
    operationId: "createWebhook",
    method: "POST",
    path: "/v1/webhooks",
    service: "webhooks",
    scope: "webhooks.write",
    summary:
      "Subscribe a URL to an event (needs the event area's read scope too); the secret is shown once",
    tag: "Webhooks",
    body: CreateWebhookBody,
    responses: { 201: WebhookSubscription, 200: WebhookSubscription },
  },
  {
    operationId: "getWebhook",
    method: "GET",
    path: "/v1/webhooks/{webhookId}",
    service: "webhooks",
    scope: "webhooks.read",
    summary: "One subscription of this credential",
    tag: "Webhooks",
    responses: { 200: WebhookSubscription },
  },
  {
    operationId: "updateWebhook",
    method: "PATCH",
    path: "/v1/webhooks/{webhookId}",
    service: "webhooks",
    scope: "webhooks.write",
    summary: "Point a subscription at another URL; its secret and delivery history stay",
    tag: "Webhooks",
    body: UpdateWebhookBody,
    responses: { 200: WebhookSubscription },
  },
  {
    operationId: "deleteWebhook",
    method: "DELETE",
    path: "/v1/webhooks/{webhookId}",
    service: "webhooks",
    scope: "webhooks.write",
    summary: "Unsubscribe; succeeds for an unknown id too",
    tag: "Webhooks",
    responses: { 200: Deleted },
  },
  {
    operationId: "rotateWebhookSecret",
    method: "POST",
    path: "/v1/webhooks/{webhookId}/rotate-secret",
    service: "webhooks",
    scope: "webhooks.write",
    summary: "Issue a new signing secret; the old one keeps signing deliveries for 48 hours",
    tag: "Webhooks",
    responses: { 200: WebhookSubscription },
  },
  {
    operationId: "listWebhookDeliveries",
    method: "GET",
    path: "/v1/webhooks/{webhookId}/deliveries",
    service: "webhooks",
    scope: "webhooks.read",
    summary:
      "Deliveries of a subscription, newest first, with every attempt; never a response body",
    tag: "Webhooks",
    query: ListDeliveriesQuery,
    responses: { 200: page(WebhookDelivery) },
  },
  {
    operationId: "retryWebhookDelivery",
    method: "POST",
    path: "/v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry",
    service: "webhooks",
    scope: "webhooks.write",
    summary: "Attempt a failed delivery again now and answer with the result (409 unless failed)",
    tag: "Webhooks",
    responses: { 200: WebhookDelivery },
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
