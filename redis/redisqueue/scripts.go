package redisqueue

import "github.com/redis/go-redis/v9"

// The scripts keep every change of state atomic: a delivery, its dedup key
// and its stream entry are stored together or not at all, and a partition's
// head moves only with the settling of the delivery at its head.
//
// Keys, under the prefix P (KEYS[1] is the stream, ARGV[1] is P):
//
//	P stream          the stream of pending deliveries; entry field "id"
//	P seq             the last delivery id given out
//	P d:<id>          hash: j (the delivery as JSON), p (partition), ps (its
//	                  place in the partition), n (attempts), e (last error),
//	                  at (ready time, Unix ms), sid (stream entry), dead
//	P ps:<partition>  the last place given out in the partition
//	P ph:<partition>  the last place settled (acked or dead-lettered)
//	P k:<key>         a dedup key, expiring after the dedup window
//	P dead            sorted set of dead-lettered ids
//	P cp              hash of checkpoints
//
// A partition's two counters are deleted once everything in it is settled,
// so they live only as long as the partition has pending deliveries.

// settleLua moves a partition's head past place ps; it is shared by ack and
// dead-letter.
const settleLua = `
local function settle(p, part, ps)
  if part == '' then return end
  local head = tonumber(redis.call('GET', p..'ph:'..part) or '0')
  if tonumber(ps) ~= head + 1 then return end
  local last = tonumber(redis.call('GET', p..'ps:'..part) or '0')
  if head + 1 >= last then
    redis.call('DEL', p..'ph:'..part, p..'ps:'..part)
  else
    redis.call('SET', p..'ph:'..part, head + 1)
  end
end
`

// putScript: ARGV prefix, dedup key, window ms, max pending, partition, JSON,
// state key (remembered beside the dedup key, never checked).
// Returns the new id, -1 when full, -2 for a duplicate.
var putScript = redis.NewScript(`
local p = ARGV[1]
local max = tonumber(ARGV[4])
if max > 0 and redis.call('XLEN', KEYS[1]) >= max then return -1 end
if ARGV[2] ~= '' then
  if not redis.call('SET', p..'k:'..ARGV[2], '1', 'NX', 'PX', ARGV[3]) then return -2 end
  if ARGV[7] ~= '' and ARGV[7] ~= ARGV[2] then redis.call('SET', p..'k:'..ARGV[7], '1', 'PX', ARGV[3]) end
end
local id = redis.call('INCR', p..'seq')
local ps = 0
if ARGV[5] ~= '' then ps = redis.call('INCR', p..'ps:'..ARGV[5]) end
local sid = redis.call('XADD', KEYS[1], '*', 'id', id)
redis.call('HSET', p..'d:'..id, 'j', ARGV[6], 'p', ARGV[5], 'ps', ps, 'n', 0, 'at', 0, 'sid', sid)
return id
`)

// leaseScript: ARGV prefix, now ms, then pairs of id and stream entry id, in
// arrival order. It leases the first ready one and returns {id, attempts,
// JSON, last error, gone}, or {0, 0, "", "", gone} when none is ready; gone
// lists the entries whose delivery was settled meanwhile.
var leaseScript = redis.NewScript(`
local p = ARGV[1]
local now = tonumber(ARGV[2])
local gone = {}
for i = 3, #ARGV, 2 do
  local k = p..'d:'..ARGV[i]
  local f = redis.call('HMGET', k, 'p', 'ps', 'at', 'sid', 'dead')
  if f[4] ~= ARGV[i+1] or f[5] then
    table.insert(gone, ARGV[i+1])
  else
    local ready = tonumber(f[3]) <= now
    if ready and f[1] ~= '' then
      ready = tonumber(f[2]) == tonumber(redis.call('GET', p..'ph:'..f[1]) or '0') + 1
    end
    if ready then
      local n = redis.call('HINCRBY', k, 'n', 1)
      local v = redis.call('HMGET', k, 'j', 'e')
      return {tonumber(ARGV[i]), n, v[1], v[2] or '', gone}
    end
  end
end
return {0, 0, "", "", gone}
`)

// ackScript: ARGV prefix, group, id. Returns 0 when the delivery was already
// settled (by a receiver that took over its lease).
var ackScript = redis.NewScript(settleLua + `
local p = ARGV[1]
local k = p..'d:'..ARGV[3]
local f = redis.call('HMGET', k, 'p', 'ps', 'sid', 'dead')
if not f[3] or f[3] == '' or f[4] then return 0 end
redis.call('XACK', KEYS[1], ARGV[2], f[3])
redis.call('XDEL', KEYS[1], f[3])
redis.call('DEL', k)
settle(p, f[1], f[2])
return 1
`)

// retryScript: ARGV prefix, id, ready time ms, reason. The entry stays
// leased to its receiver, which keeps it ahead of its partition.
var retryScript = redis.NewScript(`
local k = ARGV[1]..'d:'..ARGV[2]
local f = redis.call('HMGET', k, 'sid', 'dead')
if not f[1] or f[2] then return 0 end
redis.call('HSET', k, 'at', ARGV[3], 'e', ARGV[4])
return 1
`)

// deadScript: ARGV prefix, group, id, reason.
var deadScript = redis.NewScript(settleLua + `
local p = ARGV[1]
local k = p..'d:'..ARGV[3]
local f = redis.call('HMGET', k, 'p', 'ps', 'sid', 'dead')
if not f[3] or f[4] then return 0 end
redis.call('XACK', KEYS[1], ARGV[2], f[3])
redis.call('XDEL', KEYS[1], f[3])
redis.call('HSET', k, 'dead', 1, 'e', ARGV[4], 'sid', '')
redis.call('ZADD', p..'dead', ARGV[3], ARGV[3])
settle(p, f[1], f[2])
return 1
`)

// requeueScript: ARGV prefix, id. The delivery gets a new id and stream
// entry, behind the pending deliveries of its partition, and keeps its dedup
// key. Returns the new id, or 0 when id is no dead letter.
var requeueScript = redis.NewScript(`
local p = ARGV[1]
if redis.call('ZREM', p..'dead', ARGV[2]) == 0 then return 0 end
local id = redis.call('INCR', p..'seq')
local k = p..'d:'..id
redis.call('RENAME', p..'d:'..ARGV[2], k)
local part = redis.call('HGET', k, 'p')
local ps = 0
if part ~= '' then ps = redis.call('INCR', p..'ps:'..part) end
local sid = redis.call('XADD', KEYS[1], '*', 'id', id)
redis.call('HDEL', k, 'dead')
redis.call('HSET', k, 'ps', ps, 'n', 0, 'at', 0, 'sid', sid)
return id
`)

// deleteScript: ARGV prefix, id.
var deleteScript = redis.NewScript(`
local p = ARGV[1]
if redis.call('ZREM', p..'dead', ARGV[2]) == 0 then return 0 end
redis.call('DEL', p..'d:'..ARGV[2])
return 1
`)

// renewScript: ARGV group, consumer, then stream entry ids. It resets the
// idle time of the entries still leased to consumer, and returns those that
// another receiver has taken over.
var renewScript = redis.NewScript(`
local lost = {}
for i = 3, #ARGV do
  local pe = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if #pe == 1 and pe[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
  else
    table.insert(lost, ARGV[i])
  end
end
return lost
`)
