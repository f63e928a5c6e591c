/**
 * Mocks: artwork placed on a garment for a quote, a quote group or a job (spec 4.9). A proof's
 * revision shows mocks' images; the list is not paginated, so it is always narrowed.
 */
import { z } from "zod";
import {
  atLeastOneOf,
  DateTime,
  Deleted,
  described,
  documentRules,
  setExamples,
  Text,
  Uuid,
  writeBodies,
} from "../common.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { ImageList } from "./values.ts";

/** The fields of which a mock names at least one, and `GET /v1/mocks` filters on at least one. */
export const MOCK_OWNER_FIELDS = ["quoteId", "quoteGroupId", "jobId"] as const;

const MOCK_DESCRIPTIONS = {
  id: "The mock's id",
  quoteId: "The quote it is for (an id in the quotes service; kept as given, not checked)",
  quoteGroupId: "The quote group it is for (an id in the quotes service; kept as given)",
  jobId: "The production job it is for (kept as given; no service keeps jobs here)",
  name: "What it shows, in a line (`Front: logo on black tee`)",
  images: "The mock's images, https URLs, in the order they are shown",
  notes: "Notes for the shop or the customer",
  createdAt: "When it was created",
  updatedAt: "When it last changed",
};

export const Mock = z.object(described({
  id: Uuid,
  quoteId: Uuid.nullable(),
  quoteGroupId: Uuid.nullable(),
  jobId: Uuid.nullable(),
  name: z.string(),
  images: z.array(z.string()),
  notes: z.string().nullable(),
  createdAt: DateTime,
  updatedAt: DateTime,
}, MOCK_DESCRIPTIONS)).meta({
  id: "Mock",
  description: "Artwork placed on a garment, for a quote, a quote group or a job",
});
export type Mock = z.infer<typeof Mock>;

export const MOCK_EXAMPLE: Mock = {
  id: "0193b1a0-1c2d-7e3f-8a40-5b6c7d8e9fa0",
  quoteId: "0193a3e0-1b2c-7d3e-8f40-516273849506",
  quoteGroupId: "0193a3e0-2c3d-7e4f-8051-627384950617",
  jobId: null,
  name: "Front: bakery logo on black tee",
  images: [
    "https://files.inkwellprint.com.au/mocks/riverside-front.png",
    "https://files.inkwellprint.com.au/mocks/riverside-front-detail.png",
  ],
  notes: "Logo 28 cm wide, centred 8 cm below the collar",
  createdAt: "2026-11-20T23:20:11.402Z",
  updatedAt: "2026-11-20T23:20:11.402Z",
};
setExamples(Mock, MOCK_EXAMPLE);

export const { create: CreateMockBody, update: UpdateMockBody } = writeBodies(
  "Mock",
  described({
    quoteId: Uuid.nullable(),
    quoteGroupId: Uuid.nullable(),
    jobId: Uuid.nullable(),
    name: Text(200),
    images: ImageList,
    notes: z.string().max(10_000, "Must be at most 10000 characters").nullable(),
  }, {
    ...MOCK_DESCRIPTIONS,
    quoteId: `${MOCK_DESCRIPTIONS.quoteId}; a mock names at least one of quoteId, ` +
      "quoteGroupId and jobId",
  }),
  ["name"],
);
setExamples(CreateMockBody, {
  quoteId: MOCK_EXAMPLE.quoteId,
  quoteGroupId: MOCK_EXAMPLE.quoteGroupId,
  name: MOCK_EXAMPLE.name,
  images: MOCK_EXAMPLE.images,
  notes: MOCK_EXAMPLE.notes,
});
setExamples(UpdateMockBody, {
  images: ["https://files.inkwellprint.com.au/mocks/riverside-front-v2.png"],
});
// The owner rule, for the document too (the server's own check names every field).
documentRules(CreateMockBody, [
  atLeastOneOf(Object.fromEntries(MOCK_OWNER_FIELDS.map((field) => [field, "value"]))),
]);
export type CreateMockBody = z.infer<typeof CreateMockBody>;
export type UpdateMockBody = z.infer<typeof UpdateMockBody>;

export const ListMocksQuery = z.strictObject(described({
  quoteId: Uuid.optional(),
  quoteGroupId: Uuid.optional(),
  jobId: Uuid.optional(),
}, {
  quoteId: "Only mocks for this quote",
  quoteGroupId: "Only mocks for this quote group",
  jobId: "Only mocks for this job",
}));
export type ListMocksQuery = z.infer<typeof ListMocksQuery>;

export const mockEvents = defineEvents("proofs", "proofs.read", {
  "mock.created": { summary: "A mock was created", data: Mock },
  "mock.updated": { summary: "A mock changed", data: Mock },
  "mock.deleted": { summary: "A mock was deleted", data: Mock },
});

export const mockOperations = operations("Mocks", {
  listMocks: {
    method: "GET",
    path: "/v1/mocks",
    scope: "proofs.read",
    summary: "The mocks of a job, a quote or a quote group (at least one is required; several " +
      "narrow together), oldest first; not paged, at most `pageSizeMax` rows, and the message " +
      "says so when there were more",
    query: ListMocksQuery,
    responses: { 200: z.array(Mock).describe("The mocks, oldest first") },
    examples: { query: { quoteId: MOCK_EXAMPLE.quoteId! } },
  },
  createMock: {
    method: "POST",
    path: "/v1/mocks",
    scope: "proofs.write",
    summary: "Create a mock for a quote, a quote group or a job",
    body: CreateMockBody,
    responses: { 201: Mock },
    events: ["mock.created"],
  },
  getMock: {
    method: "GET",
    path: "/v1/mocks/{mockId}",
    scope: "proofs.read",
    summary: "Read one mock",
    responses: { 200: Mock },
  },
  updateMock: {
    method: "PATCH",
    path: "/v1/mocks/{mockId}",
    scope: "proofs.write",
    summary: "Change a mock; a decision already recorded keeps the digest of what it showed then",
    body: UpdateMockBody,
    responses: { 200: Mock },
    events: ["mock.updated"],
    examples: {
      responses: {
        200: {
          ...MOCK_EXAMPLE,
          images: ["https://files.inkwellprint.com.au/mocks/riverside-front-v2.png"],
          updatedAt: "2026-11-21T09:30:00.000Z",
        },
      },
    },
  },
  deleteMock: {
    method: "DELETE",
    path: "/v1/mocks/{mockId}",
    scope: "proofs.write",
    summary: "Delete a mock that no proof revision shows (409 naming the proofs otherwise)",
    responses: { 200: Deleted },
    events: ["mock.deleted"],
  },
});
