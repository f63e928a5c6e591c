-- The CRM's customers as the quotes service knows them: learnt from the `customer.*` events on
-- the crm topic (consumer group `quotes`), never read from the crm schema. They give a quote its
-- `clientName` and let the quote list's `search` find a quote by its client's name.
--
-- Each row keeps the newest event applied to it, (occurred_at, event_id): an event that is not
-- newer than that is a repeated or late delivery and changes nothing, so applying events again,
-- or out of order, ends in the same row. A deleted customer keeps its row, marked `deleted`, so
-- an older event arriving after the delete cannot bring it back.
CREATE TABLE crm_customers (
  organization_id uuid NOT NULL,
  id uuid NOT NULL,
  -- The customer's companyName.
  name text NOT NULL,
  is_archived boolean NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  -- The newest event applied: when it occurred in the CRM, and its id (ties on the time).
  occurred_at timestamptz NOT NULL,
  event_id uuid NOT NULL,
  -- When this service applied it.
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
