package kafkapatterns.streams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * pipeline.aggregate as Kafka Streams: enriched readings -> per (run, station, region)
 * and event-time window (of pipeline.WINDOW_MS), the count, sum, min and max of the
 * distinct readings (a reading delivered twice upstream counts once), each window's
 * current value written on every change (Spark's update mode writes one per
 * micro-batch), keyed by run|station|window start. Event time is the reading's ts; a
 * reading older than the largest ts seen minus pipeline.WATERMARK_MS is dropped, as
 * Spark's watermark drops it. Both are pipeline.py's, read from the rules file
 * (Rules.Aggregate). The readings are repartitioned by station (an internal topic of the
 * application), the seen readings and the windows kept in stores with changelogs, both
 * emptied of what the watermark has passed.
 */
public final class WindowAggregate {
    /** How often the stores are emptied of what the watermark has passed (wall clock):
     * the peer's own housekeeping, not a rule of the pipeline. */
    static final Duration EVICT_EVERY = Duration.ofSeconds(10);
    static final String SEEN = "seen";
    static final String WINDOWS = "windows";
    private static final ObjectMapper JSON = new ObjectMapper();

    private WindowAggregate() {}

    public static Topology topology(Rules.Aggregate rules, String input, String output) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(SEEN), Serdes.Bytes(),
                                                          Serdes.Long()));
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(WINDOWS), Serdes.Bytes(),
                                                          Serdes.ByteArray()));
        builder.stream(input, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .process(ByStation::new)
                .repartition(Repartitioned.<byte[], byte[]>as("by-station")
                                     .withKeySerde(Serdes.ByteArray()).withValueSerde(Serdes.ByteArray()))
                .process(() -> new Windows(rules.windowMs(), rules.watermarkMs()), SEEN, WINDOWS)
                .to(output, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        return builder.build();
    }

    /** A reading's fields as pipeline.parse_enriched reads them (from_json: a field of
     * another type is null); null when run, ts or station is missing. */
    static ObjectNode parsed(byte[] value) {
        if (value == null) {
            return null;
        }
        JsonNode node;
        try {
            node = JSON.readTree(value);
        } catch (IOException e) {
            return null;
        }
        if (node == null || !node.isObject() || !text(node, "run") || !text(node, "station")
                || !node.path("ts").canConvertToLong() || !node.path("ts").isIntegralNumber()) {
            return null;
        }
        return (ObjectNode) node;
    }

    private static boolean text(JsonNode node, String field) {
        return node.path(field).isTextual();
    }

    private static String textOrNull(JsonNode node, String field) {
        return node.path(field).isTextual() ? node.path(field).textValue() : null;
    }

    /** Keyed by run|station, with its event time as the record's timestamp. */
    static final class ByStation implements Processor<byte[], byte[], byte[], byte[]> {
        private ProcessorContext<byte[], byte[]> context;

        @Override
        public void init(ProcessorContext<byte[], byte[]> context) {
            this.context = context;
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            ObjectNode r = parsed(record.value());
            if (r == null) {
                return;
            }
            String key = r.get("run").textValue() + "|" + r.get("station").textValue();
            context.forward(record.withKey(key.getBytes(StandardCharsets.UTF_8)).withTimestamp(r.get("ts").longValue()));
        }
    }

    static final class Windows implements Processor<byte[], byte[], byte[], byte[]> {
        private final long windowMs;
        private final long watermarkMs;
        private ProcessorContext<byte[], byte[]> context;
        private KeyValueStore<Bytes, Long> seen;
        private KeyValueStore<Bytes, byte[]> windows;
        private long maxEventTime = Long.MIN_VALUE;

        Windows(long windowMs, long watermarkMs) {
            this.windowMs = windowMs;
            this.watermarkMs = watermarkMs;
        }

        @Override
        public void init(ProcessorContext<byte[], byte[]> context) {
            this.context = context;
            seen = context.getStateStore(SEEN);
            windows = context.getStateStore(WINDOWS);
            context.schedule(EVICT_EVERY, PunctuationType.WALL_CLOCK_TIME, now -> evict());
        }

        private long watermark() {
            return maxEventTime == Long.MIN_VALUE ? Long.MIN_VALUE : maxEventTime - watermarkMs;
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            ObjectNode r = parsed(record.value());
            if (r == null) {
                return;
            }
            long ts = r.get("ts").longValue();
            if (ts < watermark()) {
                return;  // later than the watermark: dropped, as Spark drops it
            }
            maxEventTime = Math.max(maxEventTime, ts);
            String run = r.get("run").textValue();
            String station = r.get("station").textValue();
            Bytes identity = Bytes.wrap((run + "|" + textOrNull(r, "sensor") + "|" + r.path("seq").asText() + "|" + ts)
                                                .getBytes(StandardCharsets.UTF_8));
            if (seen.get(identity) != null) {
                return;  // a copy from the at-least-once stages upstream
            }
            seen.put(identity, ts);
            String region = textOrNull(r, "region");
            long start = Math.floorDiv(ts, windowMs) * windowMs;
            Bytes windowKey = Bytes.wrap((run + "|" + station + "|" + region + "|" + start)
                                                 .getBytes(StandardCharsets.UTF_8));
            JsonNode temperature = r.path("temperature");
            Double t = temperature.isNumber() ? temperature.doubleValue() : null;
            Totals totals = Totals.of(windows.get(windowKey)).add(t);
            windows.put(windowKey, totals.bytes());
            ObjectNode out = JSON.createObjectNode();
            out.put("run", run);
            out.put("station", station);
            if (region != null) {
                out.put("region", region);
            }
            out.put("window_start", start);
            out.put("window_end", start + windowMs);
            out.put("n", totals.n);
            if (totals.counted > 0) {  // Spark's sum, min and max of no value are null: left out
                out.put("temperature_sum", totals.sum);
                out.put("temperature_min", totals.min);
                out.put("temperature_max", totals.max);
            }
            byte[] key = (run + "|" + station + "|" + start).getBytes(StandardCharsets.UTF_8);
            try {
                context.forward(record.withKey(key).withValue(JSON.writeValueAsBytes(out)));
            } catch (IOException e) {
                throw new IllegalStateException("an ObjectNode always serializes", e);
            }
        }

        /** What the watermark has passed leaves the stores. */
        private void evict() {
            long watermark = watermark();
            if (watermark == Long.MIN_VALUE) {
                return;
            }
            List<Bytes> old = new ArrayList<>();
            try (KeyValueIterator<Bytes, Long> all = seen.all()) {
                all.forEachRemaining(kv -> {
                    if (kv.value < watermark) {
                        old.add(kv.key);
                    }
                });
            }
            old.forEach(seen::delete);
            old.clear();
            try (KeyValueIterator<Bytes, byte[]> all = windows.all()) {
                while (all.hasNext()) {
                    KeyValue<Bytes, byte[]> kv = all.next();
                    String key = new String(kv.key.get(), StandardCharsets.UTF_8);
                    long start = Long.parseLong(key.substring(key.lastIndexOf('|') + 1));
                    if (start + windowMs <= watermark) {
                        old.add(kv.key);
                    }
                }
            }
            old.forEach(windows::delete);
        }
    }

    /** A window's count (every distinct reading), and sum, min and max of its temperatures. */
    record Totals(long n, long counted, double sum, double min, double max) {
        static Totals of(byte[] stored) {
            if (stored == null) {
                return new Totals(0, 0, 0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY);
            }
            ByteBuffer b = ByteBuffer.wrap(stored);
            return new Totals(b.getLong(), b.getLong(), b.getDouble(), b.getDouble(), b.getDouble());
        }

        Totals add(Double t) {
            if (t == null) {
                return new Totals(n + 1, counted, sum, min, max);
            }
            return new Totals(n + 1, counted + 1, sum + t, Math.min(min, t), Math.max(max, t));
        }

        byte[] bytes() {
            return ByteBuffer.allocate(40).putLong(n).putLong(counted).putDouble(sum).putDouble(min).putDouble(max)
                    .array();
        }
    }
}
