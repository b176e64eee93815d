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
//	P d:<id>          hash: m, b, r, c (the delivery, see codec.go; j in
//	                  the old format), p (partition), ps (its place in the
//	                  partition), n (attempts), e (last error), at (ready
//	                  time, Unix ms), sid (stream entry), dead
//	P ps:<partition>  the last place given out in the partition
//	P ph:<partition>  the last place settled (acked or dead-lettered)
//	P k:<key>         a dedup key, expiring after the dedup window; its
//	                  value is a mark (see dedupMark). Written with its
//	                  delivery, it also tells the watch (watch.go) that
//	                  the data set still holds that delivery
//	P dead            sorted set of dead-lettered ids
//	P cp              hash of checkpoints
//	P epoch           the engine's marker: a random value written once; its
//	                  absence, or a change, tells that the data set was lost
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

// releaseLua takes a delivery's entry off the stream for good, as ack and
// dead-letter do: release returns the delivery's fields p, ps, sid and dead,
// or nil when it is settled already or sid names another entry.
const releaseLua = settleLua + `
local function release(k, group, sid)
  local f = redis.call('HMGET', k, 'p', 'ps', 'sid', 'dead')
  if f[3] ~= sid or f[4] then return nil end
  redis.call('XACK', KEYS[1], group, sid)
  redis.call('XDEL', KEYS[1], sid)
  return f
end
`

// putScript: ARGV prefix, dedup key, window ms, max pending, partition,
// state key (remembered beside the dedup key, never checked), the two keys'
// marks, the fields m, b, r and c, "1" when the stream must exist already
// (NoCreate), then the dedup key the receiver's last good check found (its
// anchor, see watch.go; empty for none). The dedup key, then the bound, are
// checked in the same atomic step as the write, so concurrent Puts cannot
// overshoot either, and a repeat is a duplicate even at the bound. Returns
// {id, epoch, damaged, gone}: id is -1 when full, -2 for a duplicate and -3
// when the stream is missing; epoch is the engine's marker (empty when
// missing); damaged is 1 when the dedup key held a value that is not a mark,
// which is then overwritten; gone is 1 when the anchor is missing.
var putScript = redis.NewScript(`
local p = ARGV[1]
local max = tonumber(ARGV[4])
local epoch = redis.call('GET', p..'epoch') or ''
local gone = 0
if ARGV[14] ~= '' and redis.call('EXISTS', p..'k:'..ARGV[14]) == 0 then gone = 1 end
if ARGV[13] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then return {-3, epoch, 0, gone} end
local damaged = 0
local k = p..'k:'..ARGV[2]
if ARGV[2] ~= '' then
  local v = redis.call('GET', k)
  if v == ARGV[7] or v == '1' then return {-2, epoch, 0, gone} end
  if v then damaged = 1 end
end
if max > 0 and redis.call('XLEN', KEYS[1]) >= max then return {-1, epoch, 0, gone} end
if ARGV[2] ~= '' then
  redis.call('SET', k, ARGV[7], 'PX', ARGV[3])
  if ARGV[6] ~= '' and ARGV[6] ~= ARGV[2] then redis.call('SET', p..'k:'..ARGV[6], ARGV[8], 'PX', ARGV[3]) end
end
local id = redis.call('INCR', p..'seq')
local ps = 0
if ARGV[5] ~= '' then ps = redis.call('INCR', p..'ps:'..ARGV[5]) end
local sid = redis.call('XADD', KEYS[1], '*', 'id', id)
redis.call('HSET', p..'d:'..id, 'm', ARGV[9], 'b', ARGV[10], 'r', ARGV[11], 'c', ARGV[12],
  'p', ARGV[5], 'ps', ps, 'n', 0, 'at', 0, 'sid', sid)
return {id, epoch, damaged, gone}
`)

// leaseScript: ARGV prefix, now ms, then pairs of id and stream entry id, in
// arrival order. It leases the first ready one and returns {id, attempts,
// stream entry id, last error, gone, m, b, r, c, j}, or {0, 0, ”, ”, gone}
// when none is ready; gone lists the entries whose delivery was settled
// meanwhile.
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
      local v = redis.call('HMGET', k, 'e', 'm', 'b', 'r', 'c', 'j')
      for j = 1, 6 do v[j] = v[j] or '' end
      return {tonumber(ARGV[i]), n, ARGV[i+1], v[1], gone, v[2], v[3], v[4], v[5], v[6]}
    end
  end
end
return {0, 0, '', '', gone}
`)

// ackScript: ARGV prefix, group, id, stream entry id. Returns 0 when the
// delivery was already settled (by a receiver that took over its lease), or
// id now names another delivery (the engine lost its state meanwhile).
var ackScript = redis.NewScript(releaseLua + `
local p = ARGV[1]
local k = p..'d:'..ARGV[3]
local f = release(k, ARGV[2], ARGV[4])
if not f then return 0 end
redis.call('DEL', k)
settle(p, f[1], f[2])
return 1
`)

// retryScript: ARGV prefix, id, ready time ms, reason, stream entry id. The
// entry stays leased to its receiver, which keeps it ahead of its partition.
var retryScript = redis.NewScript(`
local k = ARGV[1]..'d:'..ARGV[2]
local f = redis.call('HMGET', k, 'sid', 'dead')
if f[1] ~= ARGV[5] or f[2] then return 0 end
redis.call('HSET', k, 'at', ARGV[3], 'e', ARGV[4])
return 1
`)

// deadScript: ARGV prefix, group, id, reason, stream entry id.
var deadScript = redis.NewScript(releaseLua + `
local p = ARGV[1]
local k = p..'d:'..ARGV[3]
local f = release(k, ARGV[2], ARGV[5])
if not f then return 0 end
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

// checkScript: ARGV prefix, group, then dedup keys to look for. Returns
// {epoch, seq, oldest stream entry id, stream present, group present, dedup
// keys missing, m of the oldest pending delivery, m of the newest}, for the
// watch on the engine's state.
var checkScript = redis.NewScript(`
local p = ARGV[1]
local missing = 0
for i = 3, #ARGV do
  if redis.call('EXISTS', p..'k:'..ARGV[i]) == 0 then missing = missing + 1 end
end
local function meta(e)
  if #e ~= 1 or e[1][2][1] ~= 'id' then return '' end
  return redis.call('HGET', p..'d:'..e[1][2][2], 'm') or ''
end
local epoch = redis.call('GET', p..'epoch') or ''
local seq = redis.call('GET', p..'seq') or '0'
local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local oldest = ''
if #first == 1 then oldest = first[1][1] end
local stream, group = 0, 0
local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', KEYS[1])
if ok then
  stream = 1
  for _, g in ipairs(groups) do
    for i = 1, #g, 2 do
      if g[i] == 'name' and g[i+1] == ARGV[2] then group = 1 end
    end
  end
end
return {epoch, seq, oldest, stream, group, missing, meta(first), meta(last)}
`)

// recoverScript: ARGV prefix, group, a new epoch, the least seq. It writes the
// epoch when missing, raises seq so that delivery ids stay unique across
// the loss, and creates the stream and group when missing. Returns the
// epoch now in force.
var recoverScript = redis.NewScript(`
local p = ARGV[1]
local epoch = redis.call('GET', p..'epoch')
if not epoch then
  redis.call('SET', p..'epoch', ARGV[3])
  epoch = ARGV[3]
end
if tonumber(redis.call('GET', p..'seq') or '0') < tonumber(ARGV[4]) then redis.call('SET', p..'seq', ARGV[4]) end
pcall(redis.call, 'XGROUP', 'CREATE', KEYS[1], ARGV[2], '0', 'MKSTREAM')
return epoch
`)
