<?php
/**
 * Webhook receiver for the tests: an independent Standard Webhooks verifier and protocol
 * validator (docs/protocol.md §1), with the purger's default size limits. Appends one JSON line per request to RECEIVER_LOG.
 * The answer is 202 unless RECEIVER_CONTROL names a file containing another status code, `delay N`,
 * `max-bytes N` (413 for larger bodies), `refuse-tag TAG CODE` (CODE for batches carrying TAG) or
 * `json CODE BODY` (CODE with the JSON BODY, as the purger answers: `{"error", "message"}`).
 */
$log     = getenv( 'RECEIVER_LOG' );
$secrets = array_filter( explode( ',', (string) getenv( 'RECEIVER_SECRETS' ) ) );
$control = getenv( 'RECEIVER_CONTROL' );
$raw     = file_get_contents( 'php://input' );
$headers = array_change_key_case( getallheaders(), CASE_LOWER );
$id      = $headers['webhook-id'] ?? '';
$ts      = $headers['webhook-timestamp'] ?? '';
$sigs    = preg_split( '/\s+/', trim( $headers['webhook-signature'] ?? '' ) );

function answer( $code, array $body, array $entry ) {
	global $log;
	$entry['status'] = $code;
	$fh              = fopen( $log, 'a' );
	flock( $fh, LOCK_EX );
	fwrite( $fh, json_encode( $entry, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE ) . "\n" );
	flock( $fh, LOCK_UN );
	fclose( $fh );
	http_response_code( $code );
	header( 'Content-Type: application/json' );
	echo json_encode( $body );
	exit;
}

$entry = array(
	'path'        => parse_url( $_SERVER['REQUEST_URI'], PHP_URL_PATH ),
	'method'      => $_SERVER['REQUEST_METHOD'],
	'webhook_id'  => $id,
	'timestamp'   => $ts,
	'signature_ok' => false,
	'body'        => json_decode( $raw, true ),
	'received_at' => microtime( true ),
);

if ( $control && is_file( $control ) ) {
	$command = trim( file_get_contents( $control ) );
	if ( preg_match( '/^delay (\d+)$/', $command, $m ) ) {
		sleep( (int) $m[1] ); // A slow purger.
	}
	if ( preg_match( '/^json (\d{3}) (.+)$/s', $command, $m ) ) {
		answer( (int) $m[1], (array) json_decode( $m[2], true ), $entry );
	}
	$forced = (int) $command;
	if ( $forced ) {
		answer( $forced, array( 'error' => 'storage', 'message' => 'forced by test' ), $entry );
	}
	// A purger with a smaller body limit: 413 past N bytes.
	if ( preg_match( '/^max-bytes (\d+)$/', $command, $m ) && strlen( $raw ) > (int) $m[1] ) {
		answer( 413, array( 'error' => 'too_large', 'message' => 'forced by test' ), $entry );
	}
	// A purger that refuses any batch carrying one tag with the given status.
	if ( preg_match( '/^refuse-tag (\S+) (\d{3})$/', $command, $m ) ) {
		foreach ( (array) ( $entry['body']['events'] ?? array() ) as $event ) {
			if ( in_array( $m[1], (array) ( $event['tags'] ?? array() ), true ) ) {
				answer( (int) $m[2], array( 'error' => 'refused', 'message' => 'forced by test' ), $entry );
			}
		}
	}
}
if ( 'POST' !== $_SERVER['REQUEST_METHOD'] || '/v1/events' !== $entry['path'] ) {
	answer( 404, array( 'error' => 'not_found' ), $entry );
}
if ( 0 !== strpos( $headers['content-type'] ?? '', 'application/json' ) ) {
	answer( 415, array( 'error' => 'content_type' ), $entry );
}
if ( ! preg_match( '/^[A-Za-z0-9_.:-]{1,128}$/', $id ) || ! ctype_digit( $ts ) || abs( time() - (int) $ts ) > 300 ) {
	answer( 401, array( 'error' => 'signature', 'message' => 'bad id or timestamp' ), $entry );
}
$ok = false;
foreach ( $secrets as $secret ) {
	$key      = base64_decode( substr( $secret, 6 ), true );
	$expected = 'v1,' . base64_encode( hash_hmac( 'sha256', "$id.$ts.$raw", $key, true ) );
	foreach ( $sigs as $sig ) {
		$ok = $ok || hash_equals( $expected, $sig );
	}
}
$entry['signature_ok'] = $ok;
if ( ! $ok ) {
	answer( 401, array( 'error' => 'signature', 'message' => 'no signature matches' ), $entry );
}

// The purger's default limits (PURGER_BODY_LIMIT, PURGER_MAX_EVENT_BYTES): 413, nothing stored.
if ( strlen( $raw ) > 1048576 ) {
	answer( 413, array( 'error' => 'too_large', 'message' => 'body over 1 MiB' ), $entry );
}
foreach ( (array) ( $entry['body']['events'] ?? array() ) as $i => $event ) {
	if ( strlen( json_encode( $event, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE ) ) > 262144 ) {
		answer( 413, array( 'error' => 'event_too_large', 'field' => "/events/$i", 'message' => 'event over 256 KiB' ), $entry );
	}
}

// Protocol validation.
$body = $entry['body'];
$fail = function ( $field, $message ) use ( $entry ) {
	answer( 400, array( 'error' => 'invalid', 'field' => $field, 'message' => $message ), $entry );
};
if ( ! is_array( $body ) || ! isset( $body['site'], $body['events'] ) ) {
	$fail( '/', 'site and events required' );
}
if ( ! preg_match( '/^[a-z0-9.-]+(:[0-9]{1,5})?$/', $body['site'] ) ) {
	$fail( '/site', 'bad site' );
}
if ( ! is_array( $body['events'] ) || count( $body['events'] ) < 1 || count( $body['events'] ) > 500 ) {
	$fail( '/events', '1-500 events' );
}
$accepted = array();
foreach ( $body['events'] as $i => $event ) {
	if ( ! preg_match( '/^[A-Za-z0-9_.:-]{1,128}$/', $event['id'] ?? '' ) ) {
		$fail( "/events/$i/id", 'bad id' );
	}
	if ( ! in_array( $event['kind'] ?? '', array( 'urls', 'tags', 'prefix', 'all' ), true ) ) {
		$fail( "/events/$i/kind", 'bad kind' );
	}
	if ( ! is_bool( $event['soft'] ?? false ) || strlen( $event['reason'] ?? '' ) > 500 || ! preg_match( '/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/', $event['time'] ?? '' ) ) {
		$fail( "/events/$i", 'bad soft/reason/time' );
	}
	if ( 'tags' === $event['kind'] ) {
		if ( empty( $event['tags'] ) || count( $event['tags'] ) > 1000 ) {
			$fail( "/events/$i/tags", '1-1000 tags' );
		}
		foreach ( $event['tags'] as $j => $tag ) {
			if ( ! preg_match( '/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/', $tag ) ) {
				$fail( "/events/$i/tags/$j", 'bad tag' );
			}
		}
	}
	if ( in_array( $event['kind'], array( 'urls', 'prefix' ), true ) ) {
		if ( empty( $event['urls'] ) || count( $event['urls'] ) > 1000 ) {
			$fail( "/events/$i/urls", '1-1000 urls' );
		}
		foreach ( $event['urls'] as $j => $url ) {
			$host = strtolower( parse_url( $url, PHP_URL_HOST ) ?? '' );
			$port = parse_url( $url, PHP_URL_PORT );
			if ( $port && ! in_array( $port, array( 80, 443 ), true ) ) {
				$host .= ':' . $port;
			}
			if ( ! preg_match( '#^https?://[\x21-\x7e]+$#', $url ) || strlen( $url ) > 2048 || $host !== $body['site'] ) {
				$fail( "/events/$i/urls/$j", 'bad url' );
			}
		}
	}
	$accepted[] = $event['id'];
}
answer( 202, array( 'accepted' => $accepted, 'duplicates' => array() ), $entry );
