import { z } from "zod";
import { Uuid } from "../contracts/common.ts";
import { Quote, QUOTE_STATUSES, QuoteGroup } from "../contracts/quotes.ts";
import {
  MarkupGroup,
  QuoteGroupDecoration,
  QuoteLine,
  QuoteVariant,
  TaxRate,
} from "../contracts/quote_items.ts";
import { ALL_SCOPES, type Scope } from "../scopes.ts";
import { topicOf } from "./bus.ts";

/**
 * Every event the platform emits: its name, the service whose topic carries it, the scope a
 * credential needs to see it (subscribe to it, read it in the event log), and the schema of its
 * `data`. The public catalogue, the AsyncAPI document and the webhooks service all read this
 * table; a test proves each name is emitted by some operation and nothing else is emitted.
 */
export interface EventDefinition {
  type: string;
  service: "quotes" | "catalogue" | "crm" | "proofs" | "gateway";
  /** Read scope of the event's area; null for platform events no integrator receives. */
  readScope: Scope | null;
  summary: string;
  data: z.ZodType;
}

const QuoteDeleted = z.object({ id: Uuid }).meta({ id: "QuoteDeletedData" });
const QuoteStatusChanged = z.object({
  from: z.enum(QUOTE_STATUSES),
  to: z.enum(QUOTE_STATUSES),
  quote: Quote,
}).meta({ id: "QuoteStatusChangedData" });
const GroupDeleted = z.object({ id: Uuid, quoteId: Uuid }).meta({ id: "QuoteGroupDeletedData" });
const LineDeleted = z.object({ id: Uuid, quoteGroupId: Uuid }).meta({
  id: "QuoteLineDeletedData",
});
const VariantDeleted = z.object({ id: Uuid, quoteLineId: Uuid }).meta({
  id: "QuoteVariantDeletedData",
});
const DecorationDeleted = z.object({ id: Uuid, quoteGroupId: Uuid }).meta({
  id: "QuoteDecorationDeletedData",
});
const ApiKeyRevoked = z.object({ id: Uuid, organizationId: Uuid }).meta({
  id: "ApiKeyRevokedData",
});
const PartnerGrantUpdated = z.object({
  appId: Uuid,
  organizationId: Uuid,
  /** What the app may now do for the organisation: the app's scopes ∩ the grant's. */
  scopes: z.array(z.enum(ALL_SCOPES)),
}).meta({ id: "PartnerGrantUpdatedData" });

const quotes = (
  type: string,
  summary: string,
  data: z.ZodType,
): EventDefinition => ({ type, service: "quotes", readScope: "quotes.read", summary, data });

export const EVENT_DEFINITIONS: readonly EventDefinition[] = [
  quotes("quote.created", "A quote was created", Quote),
  quotes("quote.updated", "A quote's own fields changed", Quote),
  quotes("quote.status_changed", "A quote moved to another status", QuoteStatusChanged),
  quotes("quote.deleted", "A quote was deleted", QuoteDeleted),
  quotes("quote_group.created", "A group was added to a quote", QuoteGroup),
  quotes("quote_group.updated", "A group changed", QuoteGroup),
  quotes("quote_group.reordered", "A group's lines and decorations were reordered", QuoteGroup),
  quotes("quote_group.deleted", "A group was removed from its quote", GroupDeleted),
  quotes("quote_line.created", "A line was added to a group", QuoteLine),
  quotes("quote_line.updated", "A line changed", QuoteLine),
  quotes("quote_line.deleted", "A line was removed", LineDeleted),
  quotes("quote_variant.created", "A size/colour variant was added to a line", QuoteVariant),
  quotes("quote_variant.updated", "A variant changed", QuoteVariant),
  quotes("quote_variant.deleted", "A variant was removed", VariantDeleted),
  quotes("quote_decoration.created", "A decoration was added to a group", QuoteGroupDecoration),
  quotes("quote_decoration.updated", "A decoration changed", QuoteGroupDecoration),
  quotes("quote_decoration.deleted", "A decoration was removed", DecorationDeleted),
  quotes("markup_group.created", "A markup group was created", MarkupGroup),
  quotes("markup_group.updated", "A markup group or its bands changed", MarkupGroup),
  quotes("markup_group.deleted", "A markup group was deleted", MarkupGroup),
  quotes("tax_rate.created", "A tax rate was created", TaxRate),
  quotes(
    "tax_rate.updated",
    "A tax rate changed (for example, stopped being the default)",
    TaxRate,
  ),
  {
    type: "api_key.revoked",
    service: "gateway",
    readScope: null,
    summary: "A tenant key was revoked; its webhook subscriptions stop delivering",
    data: ApiKeyRevoked,
  },
  {
    type: "partner_grant.updated",
    service: "gateway",
    readScope: null,
    summary: "An organisation's grant to a partner app was recorded or replaced; the webhooks " +
      "service narrows (or resumes) the app's subscriptions to match",
    data: PartnerGrantUpdated,
  },
];

const BY_TYPE = new Map(EVENT_DEFINITIONS.map((d) => [d.type, d]));

export function eventDefinition(type: string): EventDefinition | undefined {
  return BY_TYPE.get(type);
}

/** Names an integrator can subscribe to and read: everything with a read scope. */
export const PUBLIC_EVENT_TYPES: readonly string[] = EVENT_DEFINITIONS
  .filter((d) => d.readScope !== null).map((d) => d.type);

/** The topics that carry events, one per emitting service. */
export const EVENT_TOPICS: readonly string[] = [
  ...new Set(EVENT_DEFINITIONS.map((d) => topicOf(d.service))),
];

export const EVENT_CATALOGUE_NOTE =
  "Subscribe with POST /v1/webhooks { url, event }. Each delivery is signed per Standard " +
  "Webhooks (webhook-id, webhook-timestamp, webhook-signature) and its body is " +
  "{ type, timestamp, data }; webhook-id is the event id, so deduplicate on it. Subscribing " +
  "needs the read scope of the event's area, and cost fields are left out unless the " +
  "subscribing credential holds costs.read. Missed deliveries can be caught up through " +
  "GET /v1/event-log?after=<eventId>.";
