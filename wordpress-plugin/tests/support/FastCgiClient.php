<?php
/**
 * Minimal FastCGI client (one request per connection) to talk to php-fpm directly in tests.
 */
final class FastCgiClient {

	/**
	 * Run one request. Returns ['headers' => string, 'body' => string, 'first_byte' => float,
	 * 'end' => float] with times in seconds since the call.
	 */
	public static function request( $socket, array $params, $stdin = '' ) {
		$start = microtime( true );
		$conn  = stream_socket_client( 'unix://' . $socket, $errno, $errstr, 10 );
		if ( ! $conn ) {
			throw new RuntimeException( "fastcgi connect: $errstr" );
		}
		stream_set_timeout( $conn, 60 );
		$record = static function ( $type, $content ) {
			return pack( 'CCnnCx', 1, $type, 1, strlen( $content ), 0 ) . $content;
		};
		$pairs = '';
		foreach ( $params as $name => $value ) {
			$pairs .= self::length( strlen( $name ) ) . self::length( strlen( $value ) ) . $name . $value;
		}
		$out = $record( 1, pack( 'nCx5', 1, 0 ) ); // BEGIN_REQUEST, role responder, close after.
		foreach ( str_split( $pairs, 65535 ) as $chunk ) {
			$out .= $record( 4, $chunk );
		}
		$out .= $record( 4, '' );
		if ( '' !== $stdin ) {
			$out .= $record( 5, $stdin );
		}
		$out .= $record( 5, '' );
		fwrite( $conn, $out );

		$stdout     = '';
		$first_byte = null;
		$end        = null;
		while ( ! feof( $conn ) ) {
			$header = self::read( $conn, 8 );
			if ( strlen( $header ) < 8 ) {
				break;
			}
			$h       = unpack( 'Cversion/Ctype/nid/nlength/Cpadding', $header );
			$content = self::read( $conn, $h['length'] );
			self::read( $conn, $h['padding'] );
			if ( 6 === $h['type'] ) {
				if ( null === $first_byte ) {
					$first_byte = microtime( true ) - $start;
				}
				$stdout .= $content;
			} elseif ( 3 === $h['type'] ) {
				$end = microtime( true ) - $start;
				break;
			}
		}
		fclose( $conn );
		$parts = explode( "\r\n\r\n", $stdout, 2 );
		return array(
			'headers'    => $parts[0],
			'body'       => $parts[1] ?? '',
			'first_byte' => $first_byte,
			'end'        => $end,
		);
	}

	private static function length( $n ) {
		return $n < 128 ? chr( $n ) : pack( 'N', $n | 0x80000000 );
	}

	private static function read( $conn, $n ) {
		$buf = '';
		while ( strlen( $buf ) < $n && ! feof( $conn ) ) {
			$buf .= fread( $conn, $n - strlen( $buf ) );
		}
		return $buf;
	}
}
