// TypeBox schemas for every route: request bodies, headers and responses (docs/protocol.md §1).
import { Type, type Static } from '@sinclair/typebox';
import { RFC3339 } from '../model/event-model.js';
import { KEY_PATTERN } from '../model/key-grammar.js';
import { SITE_PATTERN } from '../model/normalize.js';

export const ID_PATTERN = '^[A-Za-z0-9_.:-]{1,128}$';
/** printable ASCII without space: anything else must be percent-encoded by the sender */
export const URL_PATTERN = '^[!-~]+$';
export const RFC3339_SRC = RFC3339.source;
export const SITE_PATTERN_SRC = SITE_PATTERN.source;
/** most `refresh` URLs one event may carry */
export const MAX_REFRESH_URLS = 50;

const EventFields = {
  kind: Type.Union([Type.Literal('urls'), Type.Literal('tags'), Type.Literal('prefix'), Type.Literal('all')], {
    description: 'urls: exact pages; tags: xkey surrogate keys; prefix: every URL under a path; all: the whole site',
  }),
  urls: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 2048, pattern: URL_PATTERN }), {
      minItems: 1,
      description: 'at most PURGER_MAX_URLS_PER_EVENT (default 1000); beyond it 413',
    }),
  ),
  tags: Type.Optional(Type.Array(Type.String({ pattern: KEY_PATTERN }), { minItems: 1, description: 'at most PURGER_MAX_URLS_PER_EVENT (default 1000); beyond it 413' })),
  soft: Type.Optional(Type.Boolean({ default: false })),
  reason: Type.Optional(Type.String({ maxLength: 500 })),
  refresh: Type.Optional(
    Type.Array(Type.String({ description: 'an absolute URL of the site (the grammar of `urls`); one outside it is dropped and logged, the event stored without it' }), {
      maxItems: MAX_REFRESH_URLS,
      description: 'pages each node re-fetches after applying the event, if readers requested them recently; most important first (docs/protocol.md §1)',
    }),
  ),
};

export const WebhookEvent = Type.Object(
  {
    id: Type.String({ pattern: ID_PATTERN }),
    ...EventFields,
    time: Type.String({ maxLength: 64, pattern: RFC3339_SRC, description: 'RFC 3339 date-time of the change' }),
  },
  { additionalProperties: false },
);

export const OperatorEvent = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: ID_PATTERN })),
    ...EventFields,
    time: Type.Optional(Type.String({ maxLength: 64, pattern: RFC3339_SRC })),
  },
  { additionalProperties: false },
);

const Site = Type.String({ maxLength: 253, pattern: SITE_PATTERN_SRC, description: 'normalized host[:port]' });

export const WebhookBody = Type.Object(
  { site: Site, events: Type.Array(WebhookEvent, { minItems: 1, maxItems: 500 }) },
  { additionalProperties: false },
);
export type WebhookBodyT = Static<typeof WebhookBody>;

export const OperatorBody = Type.Object(
  { site: Site, events: Type.Array(OperatorEvent, { minItems: 1, maxItems: 500 }) },
  { additionalProperties: false },
);
export type OperatorBodyT = Static<typeof OperatorBody>;

export const Accepted = Type.Object({
  accepted: Type.Array(Type.String()),
  duplicates: Type.Array(Type.String()),
});

export const ErrorReply = Type.Object({
  error: Type.String(),
  message: Type.String(),
  field: Type.Optional(Type.String()),
});

/** 413: the body (PURGER_BODY_LIMIT) or one event (PURGER_MAX_URLS_PER_EVENT, PURGER_MAX_EVENT_BYTES) is too large; nothing stored */
export const TooLarge = Type.Object(
  { error: Type.String({ description: 'too_large (body) or event_too_large' }), message: Type.String(), field: Type.Optional(Type.String()) },
  {
    description:
      'Too large, nothing stored: the body is over PURGER_BODY_LIMIT (error too_large), or one event carries more URLs/keys than PURGER_MAX_URLS_PER_EVENT or more JSON bytes than PURGER_MAX_EVENT_BYTES (error event_too_large, field names the event). The message names the limit and its value; split the batch or the event',
  },
);

export const SignedHeaders = Type.Object({
  'webhook-id': Type.Optional(Type.String()),
  'webhook-timestamp': Type.Optional(Type.String()),
  'webhook-signature': Type.Optional(Type.String()),
});

/** `Authorization: Bearer <token>`: the operator token, or on read routes the read or operator token */
export const BearerHeaders = Type.Object({ authorization: Type.Optional(Type.String()) });

/** how a node applied what it refused as built (delivery/reshape.ts) */
const Via = (description: string) => Type.Union([Type.Literal('split'), Type.Literal('host-ban')], { description });

const NodeReceipt = Type.Object({
  node: Type.String(),
  state: Type.Union([Type.Literal('applied'), Type.Literal('pending'), Type.Literal('failed'), Type.Literal('skipped')]),
  invalidated: Type.Optional(Type.Integer()),
  via: Type.Optional(
    Via(
      'applied another way because the node refused the request as built (a 4xx, a 503 "VCL failed"): split = its keys sent in smaller groups; host-ban = a ban of the whole site (every page of the site renders again). Absent: applied as sent',
    ),
  ),
  at: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  detail: Type.Optional(Type.String()),
});

export const Receipt = Type.Object({
  id: Type.String(),
  site: Type.String(),
  kind: Type.String(),
  soft: Type.Boolean(),
  reason: Type.Optional(Type.String({ description: 'while the log still holds the event' })),
  acceptedAt: Type.String(),
  nodes: Type.Array(NodeReceipt),
});
export type ReceiptT = Static<typeof Receipt>;

/** most event ids one POST /v1/receipts may ask about */
export const MAX_RECEIPT_IDS = 100;

export const SiteReceiptsBody = Type.Object(
  { site: Site, ids: Type.Array(Type.String({ pattern: ID_PATTERN }), { minItems: 1, maxItems: MAX_RECEIPT_IDS, description: "the site's event ids" }) },
  { additionalProperties: false },
);
export type SiteReceiptsBodyT = Static<typeof SiteReceiptsBody>;

const NodeSummary = Type.Object({
  node: Type.String(),
  state: Type.Union([Type.Literal('applied'), Type.Literal('pending'), Type.Literal('failed')], {
    description: 'applied: every found event applied (or skipped) there; failed: one failed; pending otherwise',
  }),
  at: Type.Optional(Type.String({ description: 'the latest time it applied one of the events' })),
  via: Type.Optional(Via('when applied: host-ban if the node applied one of the events as a ban of the whole site, else split if it split one; absent when every event went as sent')),
  error: Type.Optional(Type.String()),
  detail: Type.Optional(Type.String()),
});

export const SiteReceipts = Type.Object({
  site: Type.String(),
  total: Type.Integer({ description: 'nodes' }),
  live: Type.Integer({ description: 'nodes on which every found event is applied or skipped' }),
  complete: Type.Boolean({ description: 'live == total and every id found' }),
  changedAt: Type.Optional(Type.String({ description: 'the earliest `time` of the found events' })),
  liveAt: Type.Optional(Type.String({ description: 'when complete: the latest time a node applied one of them' })),
  ms: Type.Optional(Type.Integer({ minimum: 0, description: 'when complete: liveAt - changedAt' })),
  missing: Type.Array(Type.String(), { description: 'ids not (yet) in the log' }),
  nodes: Type.Array(NodeSummary),
  events: Type.Array(Receipt),
});
export type SiteReceiptsT = Static<typeof SiteReceipts>;
