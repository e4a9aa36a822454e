/**
 * The request log in a SQLite file as `requests` rows, for specs that read the file: the rows an
 * accept kept on its event or run (src/store/sql/requests.ts) included and decoded as
 * src/store/rows.ts toRequest does (an event's time is in ms). Use it where a spec would say `FROM requests`.
 */
const folded = (table: 'events' | 'runs') => `SELECT req_seq, strftime('%Y-%m-%dT%H:%M:%fZ', ${table === 'events'
    ? "(at - req_lag) / 1000.0, 'unixepoch'" : "created_at, printf('%.3f seconds', -req_lag / 1000.0)"}),
    req_id, coalesce(req_method, 'POST'), req_path, req_route, req_status, req_ms / 10.0, ${table === 'events' ? 'id, NULL' : 'NULL, run_id'}, 0, NULL,
    CASE req_type WHEN '' THEN NULL ELSE coalesce(req_type, 'application/json') END, req_ua, NULL, NULL, NULL, req_sender, NULL, NULL, NULL
  FROM ${table} WHERE req_seq IS NOT NULL`;

export const REQUEST_LOG = `(SELECT seq, at, request_id, method, path, route, status, ms, event_ids, run_ids, replayed, error, content_type, user_agent,
    body, body_until, replay_of, sender, head, explain, failures FROM requests
  UNION ALL ${folded('events')} UNION ALL ${folded('runs')}) AS requests`;
