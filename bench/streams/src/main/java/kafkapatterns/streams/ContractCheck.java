package kafkapatterns.streams;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The contract's verdicts for the differential test: one value per stdin line (base64,
 * or - for a null value), one JSON line per value on stdout,
 * {"reason": null} for a valid reading. The contract's rules are those of the rules file
 * (Rules: bench/streams_peer.py's rules_file() writes it).
 *
 *   java -cp 'streams-peer.jar:libs/*' kafkapatterns.streams.ContractCheck --rules rules.json < values
 */
public final class ContractCheck {
    private ContractCheck() {}

    public static void main(String[] args) throws IOException {
        ReadingContract contract;
        try {
            contract = new ReadingContract(Rules.load(Peer.one(Peer.parse(args), "rules")).contract());
        } catch (Rules.Invalid e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        ObjectMapper json = new ObjectMapper();
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                byte[] value = line.equals("-") ? null : Base64.getDecoder().decode(line);
                Map<String, Object> verdict = new LinkedHashMap<>();
                verdict.put("reason", contract.judge(value).reason());
                out.println(json.writeValueAsString(verdict));
            }
        }
        out.flush();
    }
}
