-- caio's state in one line per object, for comparing two databases (not
-- caio_token_epoch: a copy records a lineage of its own).
SELECT 'caio_lease_state' AS object, count(*) AS rows,
       md5(string_agg(format('%s|%s|%s|%s|%s|%s|%s', resource, holder, holder_role, token,
                             acquired_at, expires_at, released_at), ',' ORDER BY resource)) AS digest
  FROM caio_lease_state
UNION ALL
SELECT 'caio_nonce_wallet', count(*),
       md5(string_agg(format('%s|%s|%s|%s|%s', chain_id, address, chain_count, next_nonce, synced_at),
                      ',' ORDER BY chain_id, address))
  FROM caio_nonce_wallet
UNION ALL
SELECT 'caio_nonce_reservation', count(*),
       md5(string_agg(format('%s|%s|%s|%s|%s|%s|%s', chain_id, address, nonce, state, resource, token, tx_hash),
                      ',' ORDER BY chain_id, address, nonce))
  FROM caio_nonce_reservation
UNION ALL
SELECT 'caio_token_seq', last_value, is_called::text FROM caio_token_seq
UNION ALL
SELECT 'ledger', count(*), md5(string_agg(format('%s|%s|%s|%s', id, worker, nonce, fence_token), ',' ORDER BY id))
  FROM ledger
ORDER BY 1;
