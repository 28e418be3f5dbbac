package kafkapatterns.streams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The stateless stages of kafka_patterns.jobs.pipeline and content_filter as Kafka
 * Streams topologies, record at a time: the same input and output topics, the same
 * records out (key, value, the stage's header) and the same dead letters, judged by the
 * same reading contract (ReadingContract). Schema tags are not checked: the topics the
 * peers are measured on carry no schema.
 */
public final class Stages {
    static final String SOURCE = "source";
    static final String LETTERS = "dead-letters";
    static final String PROFILES_STORE = "profiles";
    // The content filter's predicates (content_filter.PREDICATES).
    static final double HEAT_C = 30.0;
    static final double FROST_C = 0.0;
    static final List<String> PROFILE_FIELDS = List.of("name", "region", "elevation_m");
    private static final ObjectMapper JSON = new ObjectMapper();

    private Stages() {}

    /** What a stage does with a valid reading; a bad record is a dead letter. */
    @FunctionalInterface
    interface Route {
        void valid(ProcessorContext<byte[], byte[]> context, Record<byte[], byte[]> record, ObjectNode reading);
    }

    static final class Judged implements Processor<byte[], byte[], byte[], byte[]> {
        private final String job;
        private final Route route;
        private ProcessorContext<byte[], byte[]> context;

        Judged(String job, Route route) {
            this.job = job;
            this.route = route;
        }

        @Override
        public void init(ProcessorContext<byte[], byte[]> context) {
            this.context = context;
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            ReadingContract.Verdict verdict = ReadingContract.judge(record.value());
            if (verdict.valid()) {
                route.valid(context, record, verdict.reading());
            } else {
                context.forward(DeadLetters.letter(record, context.recordMetadata().orElseThrow(), verdict.reason(), job),
                                LETTERS);
            }
        }
    }

    static RecordHeaders header(String key, String value) {
        RecordHeaders headers = new RecordHeaders();
        headers.add(key, value.getBytes(StandardCharsets.UTF_8));
        return headers;
    }

    private static Topology judged(String job, String input, String deadletter, Route route, List<String[]> sinks) {
        Topology topology = new Topology();
        topology.addSource(SOURCE, new ByteArrayDeserializer(), new ByteArrayDeserializer(), input);
        topology.addProcessor(job, () -> new Judged(job, route), SOURCE);
        topology.addSink(LETTERS, deadletter, new ByteArraySerializer(), new ByteArraySerializer(), job);
        for (String[] sink : sinks) {  // {name, topic}
            topology.addSink(sink[0], sink[1], new ByteArraySerializer(), new ByteArraySerializer(), job);
        }
        return topology;
    }

    /** pipeline.clean: a valid reading unchanged to the cleaned topic. */
    public static Topology clean(String job, String input, String cleaned, String deadletter) {
        Route route = (context, record, reading) ->
                context.forward(record.withHeaders(header("stage", "clean")), "cleaned");
        return judged(job, input, deadletter, route, List.<String[]>of(new String[] {"cleaned", cleaned}));
    }

    /** content_filter.route: a valid reading to the topic of every predicate it meets. */
    public static Topology contentFilter(String job, String input, String heat, String frost, String deadletter) {
        Route route = (context, record, reading) -> {
            double t = reading.get("temperature").asDouble();
            if (t >= HEAT_C) {
                context.forward(record.withHeaders(header("predicate", heat)), "heat");
            }
            if (t <= FROST_C) {
                context.forward(record.withHeaders(header("predicate", frost)), "frost");
            }
        };
        return judged(job, input, deadletter, route,
                      List.<String[]>of(new String[] {"heat", heat}, new String[] {"frost", frost}));
    }

    /** pipeline.enrich: a valid reading joined with its station's profile (the compacted
     * profile topic, keyed by station, as a global store: the last value per key, a
     * tombstone deletes), keyed by sensor; a station without one gets no profile fields. */
    public static Topology enrich(String job, String input, String profiles, String enriched, String deadletter) {
        Route route = new Route() {
            private KeyValueStore<byte[], byte[]> store;

            @Override
            public void valid(ProcessorContext<byte[], byte[]> context, Record<byte[], byte[]> record,
                              ObjectNode reading) {
                if (store == null) {
                    store = context.getStateStore(PROFILES_STORE);
                }
                byte[] station = reading.get("station").textValue().getBytes(StandardCharsets.UTF_8);
                byte[] value = enrichedValue(reading, profile(store.get(station)));
                context.forward(record.withKey(reading.get("sensor").textValue().getBytes(StandardCharsets.UTF_8))
                                        .withValue(value).withHeaders(header("stage", "enrich")), "enriched");
            }
        };
        Topology topology = judged(job, input, deadletter, route,
                                   List.<String[]>of(new String[] {"enriched", enriched}));
        topology.addGlobalStore(
                Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(PROFILES_STORE), Serdes.ByteArray(),
                                            Serdes.ByteArray()).withLoggingDisabled(),
                "profiles-source", new ByteArrayDeserializer(), new ByteArrayDeserializer(), profiles,
                "profiles-update", () -> new ProfileUpdate());
        return topology;
    }

    static final class ProfileUpdate implements Processor<byte[], byte[], Void, Void> {
        private KeyValueStore<byte[], byte[]> store;

        @Override
        public void init(ProcessorContext<Void, Void> context) {
            store = context.getStateStore(PROFILES_STORE);
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            if (record.key() == null) {
                return;
            }
            if (record.value() == null) {
                store.delete(record.key());
            } else {
                store.put(record.key(), record.value());
            }
        }
    }

    /** A profile's JSON object, or null when there is none or it is not an object. */
    static JsonNode profile(byte[] value) {
        if (value == null) {
            return null;
        }
        try {
            JsonNode node = JSON.readTree(value);
            return node != null && node.isObject() ? node : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** The reading's fields typed as Spark's to_json writes them, then the profile's
     * (null fields left out, as to_json does). */
    static byte[] enrichedValue(ObjectNode reading, JsonNode profile) {
        ObjectNode out = JSON.createObjectNode();
        for (String name : ReadingContract.FIELDS) {
            JsonNode v = reading.get(name);
            switch (name) {
                case "seq", "ts" -> out.put(name, v.longValue());
                case "temperature", "humidity" -> out.put(name, v.doubleValue());
                default -> out.put(name, v.textValue());
            }
        }
        if (profile != null) {
            for (String name : PROFILE_FIELDS) {
                JsonNode v = profile.get(name);
                if (v == null || v.isNull()) {
                    continue;
                }
                if (name.equals("elevation_m")) {
                    if (v.isNumber()) {
                        out.put(name, v.doubleValue());
                    }
                } else if (v.isTextual()) {
                    out.put(name, v.textValue());
                }
            }
        }
        try {
            return JSON.writeValueAsBytes(out);
        } catch (IOException e) {
            throw new IllegalStateException("an ObjectNode always serializes", e);
        }
    }
}
