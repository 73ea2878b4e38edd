-- wrk script for bench/write_bench.py: PATCH the titles of random posts at a fixed rate.
--
--   WRITE_TOKEN=... WRITE_MAX_ID=100000 WRITE_RATE=25 wrk -t1 -c8 -d20s -s patch_posts.lua URL
--
-- Each thread hands out send times WRITE_RATE/threads per second apart (open loop: a slow
-- answer does not delay the requests due after it, up to the number of connections), so
-- the load is what was asked for while it can be served; wrk's own rate shows if not.
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock, bench_timespec *now);
]]
local now_buffer = ffi.new("bench_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, now_buffer) -- CLOCK_MONOTONIC
  return tonumber(now_buffer.tv_sec) * 1000 + tonumber(now_buffer.tv_nsec) / 1e6
end

local token = os.getenv("WRITE_TOKEN")
local max_id = tonumber(os.getenv("WRITE_MAX_ID"))
local interval_ms, next_due, sent

function setup(thread)
  thread:set("threads", 1)
end

function init(args)
  interval_ms = 1000 / tonumber(os.getenv("WRITE_RATE"))
  next_due = now_ms()
  sent = 0
  math.randomseed(tonumber(os.getenv("WRITE_SEED") or "3"))
end

function delay()
  local due = next_due
  next_due = next_due + interval_ms
  return math.max(0, due - now_ms())
end

function request()
  sent = sent + 1
  local id = math.random(1, max_id)
  return wrk.format("PATCH", "/api/posts/" .. id, {
    ["Authorization"] = "Bearer " .. token,
    ["Content-Type"] = "application/json",
  }, '{"title": "Edited ' .. id .. ' (' .. sent .. ')"}')
end

function response(status, headers, body)
  if status >= 300 then -- what the bench counts as "not 2xx": say what it was
    io.stderr:write("PATCH answered " .. status .. ": " .. string.sub(body or "", 1, 300) .. "\n")
  end
end
