package kafkapatterns.streams;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;

/**
 * A Kafka Streams peer of a Spark stage, as its own catalogue user over SASL_SSL:
 *
 *   java -cp 'streams-peer.jar:libs/*' kafkapatterns.streams.Peer --stage clean
 *       --rules rules.json --config client.properties --application-id streams-clean-r1
 *       --job streams-clean --input weather.readings --output weather.readings.cleaned
 *       --deadletter weather.deadletter
 *       [--output ... for content-filter: heat then frost] [--lookup user.profiles] [--from-end]
 *       [--set key=value ...]
 *
 * --rules is the file of the rules the peers share with the Python jobs (Rules;
 * bench/streams_peer.py's rules_file() writes it). --config is a client properties file
 * (make client-config USER=streams-clean writes one); --set adds or overrides a Streams
 * setting. --from-end commits the input's end offsets for the application before it
 * starts, as the Spark stages of make bench start from the end of their input. "state
 * RUNNING" on stdout says it runs; SIGTERM stops it.
 */
public final class Peer {
    private Peer() {}

    public static void main(String[] args) throws Exception {
        Map<String, List<String>> opts = parse(args);
        Rules rules;
        try {
            rules = Rules.load(one(opts, "rules"));
        } catch (Rules.Invalid e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        Stages stages = new Stages(rules);
        String stage = one(opts, "stage");
        String job = one(opts, "job");
        String input = one(opts, "input");
        List<String> outputs = opts.getOrDefault("output", List.of());
        // The aggregate writes no dead letters (its input is enrich's valid readings).
        String deadletter = opts.containsKey("deadletter") ? one(opts, "deadletter") : null;
        Topology topology = switch (stage) {
            case "clean" -> stages.clean(job, input, only(outputs, 1, stage).get(0), deadletter);
            case "content-filter" -> stages.contentFilter(job, input, only(outputs, 2, stage).get(0), outputs.get(1),
                                                          deadletter);
            case "enrich" -> stages.enrich(job, input, one(opts, "lookup"), only(outputs, 1, stage).get(0), deadletter);
            case "aggregate" -> WindowAggregate.topology(rules.aggregate(), input, only(outputs, 1, stage).get(0));
            default -> throw new IllegalArgumentException(
                    "--stage " + stage + ": one of clean, enrich, content-filter, aggregate");
        };
        Properties props = new Properties();
        try (InputStream in = new FileInputStream(one(opts, "config"))) {
            props.load(in);
        }
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, one(opts, "application-id"));
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
        for (String setting : opts.getOrDefault("set", List.of())) {
            int eq = setting.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--set " + setting + ": key=value");
            }
            props.put(setting.substring(0, eq), setting.substring(eq + 1));
        }
        if (opts.containsKey("from-end")) {
            commitEnds(props, input);
        }
        run(topology, props);
    }

    /** The application's group starts at the end of `input`, as committed offsets. */
    static void commitEnds(Properties props, String input) throws ExecutionException, InterruptedException {
        Properties admin = new Properties();
        for (String key : props.stringPropertyNames()) {
            if (key.startsWith("ssl.") || key.startsWith("sasl.") || key.equals("security.protocol")
                    || key.equals("bootstrap.servers")) {
                admin.put(key, props.getProperty(key));
            }
        }
        try (Admin client = Admin.create(admin)) {
            TopicDescription topic = client.describeTopics(List.of(input)).allTopicNames().get().get(input);
            Map<TopicPartition, OffsetSpec> latest = topic.partitions().stream().collect(Collectors.toMap(
                    p -> new TopicPartition(input, p.partition()), p -> OffsetSpec.latest()));
            Map<TopicPartition, OffsetAndMetadata> ends = new HashMap<>();
            client.listOffsets(latest).all().get().forEach((tp, info) -> ends.put(tp, new OffsetAndMetadata(info.offset())));
            client.alterConsumerGroupOffsets(props.getProperty(StreamsConfig.APPLICATION_ID_CONFIG), ends).all().get();
        }
    }

    static void run(Topology topology, Properties props) throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        KafkaStreams streams = new KafkaStreams(topology, props);
        try {
            streams.setStateListener((now, before) -> {
                System.out.println("state " + now);
                System.out.flush();
                if (now == KafkaStreams.State.NOT_RUNNING || now == KafkaStreams.State.ERROR) {
                    stopped.countDown();
                }
            });
            // A record the stage cannot write (or an unexpected error) stops the peer, named.
            streams.setUncaughtExceptionHandler(e -> {
                e.printStackTrace();
                return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
            });
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                streams.close();
                stopped.countDown();
            }));
            streams.start();
            stopped.await();
        } finally {
            streams.close();
        }
    }

    static Map<String, List<String>> parse(String[] args) {
        Map<String, List<String>> opts = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + args[i]);
            }
            String name = args[i].substring(2);
            if (name.equals("from-end")) {
                opts.put(name, List.of());
                continue;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(args[i] + " needs a value");
            }
            opts.computeIfAbsent(name, k -> new ArrayList<>()).add(args[++i]);
        }
        return opts;
    }

    static String one(Map<String, List<String>> opts, String name) {
        List<String> values = opts.get(name);
        if (values == null || values.size() != 1) {
            throw new IllegalArgumentException("--" + name + " is required, once");
        }
        return values.get(0);
    }

    static List<String> only(List<String> outputs, int n, String stage) {
        if (outputs.size() != n) {
            throw new IllegalArgumentException("--stage " + stage + " takes " + n + " --output topic(s), got " + outputs);
        }
        return outputs;
    }
}
