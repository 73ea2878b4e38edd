-- wrk script for bench/varnish_bench.py: GET a list of paths in turn, as a crawler reads a
-- site (the index, every sitemap page in its forms, robots.txt), gzip accepted.
--
--   READ_PATHS=paths.txt READ_THREADS=2 wrk -t2 -c32 -d10s -s read_paths.lua URL
--
-- READ_PATHS names a file of paths, one a line; READ_THREADS is wrk's -t. Each thread
-- starts at its own place in the list and goes round it. The requests are formatted once,
-- in init: a request costs wrk no Lua formatting, so its CPU time stays its own I/O's.
local threads_started = 0
local requests = {}
local next_request

function setup(thread)
  thread:set("thread_number", threads_started)
  threads_started = threads_started + 1
end

function init(args)
  for path in io.lines(os.getenv("READ_PATHS")) do
    if path ~= "" then
      requests[#requests + 1] = wrk.format("GET", path, { ["Accept-Encoding"] = "gzip" })
    end
  end
  local threads = tonumber(os.getenv("READ_THREADS") or "1")
  next_request = 1 + math.floor(thread_number * #requests / threads) % #requests
end

function request()
  local formatted = requests[next_request]
  next_request = next_request % #requests + 1
  return formatted
end
