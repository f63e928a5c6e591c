/**
 * What the operations under each tag of the document are for. A tag used by `operations(tag, …)`
 * but missing here reaches the document undescribed, which its lint test refuses.
 */
export const TAGS = {
  Account: "Who is calling and the limits in force for that credential",
  Quotes: "Quotes, their lifecycle and their groups; a group's lines and decorations share " +
    "one row order",
  "Quote lines": "Lines of a quote group (garments, services, costs, discounts, surcharges) " +
    "and their size/colour variants, where cost and markup give the sell price",
  "Quote decorations": "Print or embroidery placements of a quote group, priced per unit and " +
    "per setup",
  "Markup groups": "Bands of markups by quantity or setup cost, which `group` rows take their " +
    "markup from",
  "Tax rates": "The rates a quote's tax is computed with; one is the organisation's default",
  "Garment catalogue": "The garment styles the shop buys and sells, paged with a cursor",
  "Garment variants": "Colours and sizes of catalogue items with their stock, created in bulk",
  "Stock ledger": "Every change of a variant's stock, with who made it and why",
  "Pre-built items": "Saved garment-plus-decoration combinations, changed one by one or in bulk " +
    "over a target",
  "Catalogue settings": "How the organisation's sizes sort and whether stock may go negative",
  Customers: "The shop's clients with their contacts and addresses; tiers, tags and archiving " +
    "in bulk over a target",
  "Custom fields": "Fields a shop adds to its customers, vendors and tasks, with values checked " +
    "against them",
  Vendors: "Businesses the shop buys from or outsources decoration to, with their contacts and " +
    "addresses; archived rather than deleted",
  Tasks: "The shop's to-dos, linked to a quote, customer, vendor or job, with a checklist, " +
    "comments and attachments",
  Mocks: "Artwork placed on a garment for a quote, a quote group or a job, which proofs show",
  Proofs: "What a customer is asked to approve: numbered revisions, items with their sizes, " +
    "the customer's decisions recorded as evidence, and the history of each revision",
  Events: "The event catalogue and this organisation's event log, to catch up on missed " +
    "deliveries",
  Webhooks: "Subscriptions of the calling credential, their signing secrets and deliveries",
} as const;
