-- sql-stream: heat windows per station, a stream defined in SQL (KSQL-style).
-- Run by kafka_patterns.jobs.sql_stream, which only wires source and sink around it:
--
-- Source: the view `readings`, one row per valid reading of the job's inputs
--   (the reading contract of kafka_patterns.runtime.readings; the others are dead-lettered
--   before they get here): run, sensor, station, seq, temperature, humidity, ts
--   (event time, epoch ms), event_time (ts as a timestamp), and the record's key,
--   topic, partition, offset and kafka_ts (its Kafka timestamp).
-- Sink: each result row is one record of the job's output topic: its `key` column
--   (required) is the record key, and the value is a JSON object of all the columns
--   the query selects, key included. The query runs in append mode: a row is written
--   once, final, so an aggregate declares a watermark (its windows close behind it).
--
-- This query: readings above 25 °C, in 10-second tumbling event-time windows per run
-- and station: how many, their average and their maximum. The watermark trails the
-- newest event time by 10 seconds: a window is written once the watermark passes its
-- end, and a reading arriving after that for its window is dropped (late).
-- pattern_harness.scenarios.sql_stream computes the same windows in plain Python.
SELECT station AS key,
       run,
       station,
       unix_millis(window.start) AS window_start,
       unix_millis(window.end) AS window_end,
       count(*) AS readings,
       avg(temperature) AS avg_temperature,
       max(temperature) AS max_temperature
FROM readings WATERMARK event_time DELAY OF INTERVAL 10 SECONDS
WHERE temperature > 25.0
GROUP BY run, station, window(event_time, '10 seconds')
