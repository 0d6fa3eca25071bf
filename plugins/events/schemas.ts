/** Schemas of GET /api/events (API.md §4.17). */
import { Type } from '@sinclair/typebox';
import { EVENT_TYPES } from './bus.ts';

const TYPE_LIST = `^(${EVENT_TYPES.join('|')})(,(${EVENT_TYPES.join('|')}))*$`;

export const EventsQuery = Type.Object({
  types: Type.Optional(
    Type.String({
      pattern: TYPE_LIST,
      description: `comma list of event types (${EVENT_TYPES.join(', ')}); default all`,
    }),
  ),
  access_token: Type.Optional(
    Type.String({ description: 'API token (EventSource cannot set headers); redacted in logs' }),
  ),
});

export const EventsHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'id of the last event seen: replay what came after it, or `event: reset`',
    }),
  ),
});
