<?php
/**
 * How far an action's events got: the message editors see.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Reads the receipts of an action's events from the purger (POST /v1/receipts, signed with the
 * site's own secret) and says, in one translated sentence, on how many edge nodes the change is
 * live and, when not on all, which node has not applied it and why. Without details (a person who
 * may not purge), only counts: no node name or address, no purger URL, no error text.
 */
class Live_Status {

	const MAX_IDS = 100;

	/**
	 * How often `wait()` asks the purger, in microseconds.
	 */
	const POLL_US = 250000;

	/**
	 * Seconds an editor's poll (`of()` with `$poll`) waits for the purger's receipts. A healthy
	 * purger answers them from Redis in milliseconds; 1 s is also the least WordPress's cURL
	 * transport waits. Webhooks keep `Webhook_Client::TIMEOUT` (2 s).
	 */
	const POLL_TIMEOUT = 1.0;

	/**
	 * Seconds an unreachable purger (no HTTP answer: refused, timed out, unknown host) is
	 * remembered, per site and purger URL. Polls in that window answer at once from the
	 * remembered failure without contacting the purger, and tell the block editor to wait that
	 * long (`retryAfter`): however many editors are open, only the polls already waiting on a
	 * silent purger when it times out held a PHP worker (for POLL_TIMEOUT), then none for 10 s;
	 * a purger that is back is noticed within 10 s.
	 */
	const DOWN_FOR = 10;

	/**
	 * Transient of the remembered failure, followed by md5 of the receipts endpoint.
	 */
	const DOWN_TRANSIENT = 'varnish_edge_purger_down_';

	/** @var Settings */
	private $settings;

	/** @var Webhook_Client */
	private $client;

	/**
	 * Constructor.
	 *
	 * @param Settings       $settings Settings.
	 * @param Webhook_Client $client   Signed requests to the purger.
	 */
	public function __construct( Settings $settings, Webhook_Client $client ) {
		$this->settings = $settings;
		$this->client   = $client;
	}

	/**
	 * The status panel, where the outbox and the delivery errors are.
	 */
	public static function status_url(): string {
		return admin_url( 'options-general.php?page=' . Admin_Page::SLUG . '#varnish-edge-status' );
	}

	/**
	 * The status of an action (an entry of `Live_Status_Log`, or null when there is none).
	 *
	 * @param array{post:int,at:int,ids:string[]|null}|null $entry   The action.
	 * @param bool                                          $details Node names, their errors and the
	 *                                                               purger's errors (for those who may
	 *                                                               purge); false: counts only, `nodes` empty.
	 * @param bool                                          $poll    An editor's poll: a short timeout,
	 *                                                               and an unreachable purger is
	 *                                                               remembered for DOWN_FOR seconds
	 *                                                               (`retryAfter` in the status).
	 * @return array{state:string,message:string,live:int,total:int,ms:int|null,nodes:array<int,array<string,mixed>>,statusUrl:string,retryAfter?:int}
	 */
	public function of( ?array $entry, bool $details = true, bool $poll = false ): array {
		if ( ! $this->settings->is_configured() ) {
			return $this->status( 'none', __( 'The purger is not configured: nothing is sent to the edge.', 'varnish-edge' ) );
		}
		if ( null === $entry ) {
			return $this->status( 'none', __( 'No recent change of yours to report.', 'varnish-edge' ) );
		}
		if ( null === $entry['ids'] ) {
			return $this->status( 'pending', __( 'Sending to the purger…', 'varnish-edge' ) );
		}
		if ( array() === $entry['ids'] ) {
			return $this->status( 'none', __( 'Nothing was sent to the edge: this change does not show on public pages.', 'varnish-edge' ) );
		}
		$result = $poll ? $this->poll_receipts( $entry['ids'] ) : $this->receipts( $entry['ids'] );
		if ( ! $result['ok'] ) {
			if ( $details ) {
				/* translators: %s: what failed. */
				$message = sprintf( __( 'Could not read the edge status: %s', 'varnish-edge' ), $result['error'] );
			} elseif ( 0 === $result['code'] ) {
				$message = __( 'Could not read the edge status: the purger cannot be reached right now.', 'varnish-edge' );
			} else {
				$message = __( 'Could not read the edge status: the purger refused the request.', 'varnish-edge' );
			}
			$status = $this->status( 'failed', $message );
			if ( isset( $result['retry'] ) ) {
				$status['retryAfter'] = (int) $result['retry'];
			}
			return $status;
		}
		return $this->from_receipts( $result['body'], (int) $entry['at'], $details );
	}

	/**
	 * `receipts()` for an editor's poll: POLL_TIMEOUT, and no request while the purger is
	 * remembered unreachable (DOWN_FOR). A failure without an HTTP answer is remembered; `retry`
	 * says in how many seconds the purger will be asked again.
	 *
	 * @param string[] $ids Event ids.
	 * @return array{ok:bool,code:int,error:string,body:array<string,mixed>,retry?:int}
	 */
	private function poll_receipts( array $ids ): array {
		$key  = self::DOWN_TRANSIENT . md5( $this->settings->receipts_endpoint() );
		$down = get_transient( $key );
		$left = is_array( $down ) && isset( $down['error'], $down['until'] ) ? (int) $down['until'] - time() : 0;
		if ( $left > 0 ) {
			return array(
				'ok'    => false,
				'code'  => 0,
				'error' => (string) $down['error'],
				'body'  => array(),
				'retry' => $left,
			);
		}
		$result = $this->client->receipts( Settings::site_host( home_url() ), array_slice( array_values( $ids ), 0, self::MAX_IDS ), self::POLL_TIMEOUT );
		if ( ! $result['ok'] && 0 === $result['code'] ) {
			set_transient(
				$key,
				array(
					'error' => $result['error'],
					'until' => time() + self::DOWN_FOR,
				),
				self::DOWN_FOR
			);
			$result['retry'] = self::DOWN_FOR;
		}
		return $result;
	}

	/**
	 * The purger's receipts of some of this site's events (the first MAX_IDS), as
	 * `Webhook_Client::receipts()` reads them: `body` is the answer `from_receipts()` takes.
	 *
	 * @param string[] $ids Event ids.
	 * @return array{ok:bool,code:int,error:string,body:array<string,mixed>}
	 */
	public function receipts( array $ids ): array {
		return $this->client->receipts( Settings::site_host( home_url() ), array_slice( array_values( $ids ), 0, self::MAX_IDS ) );
	}

	/**
	 * Ask until the action is live everywhere, cannot be told, or `$seconds` passed.
	 *
	 * @param array{post:int,at:int,ids:string[]|null} $entry   The action.
	 * @param float                                    $seconds Longest wait.
	 * @return array<string,mixed> The last status.
	 */
	public function wait( array $entry, float $seconds ): array {
		$until = microtime( true ) + $seconds;
		while ( true ) {
			$status = $this->of( $entry );
			$final  = in_array( $status['state'], array( 'live', 'none' ), true ) || ( 'failed' === $status['state'] && ! $status['total'] );
			if ( $final || microtime( true ) + self::POLL_US / 1e6 > $until ) {
				return $status;
			}
			usleep( self::POLL_US );
		}
	}

	/**
	 * The status the purger's answer tells (docs/protocol.md, receipts of a site).
	 *
	 * @param array<string,mixed> $answer  The purger's answer.
	 * @param int                 $at      When the action happened (ms).
	 * @param bool                $details Node names and errors; false: counts only, `nodes` empty.
	 * @return array<string,mixed>
	 */
	public function from_receipts( array $answer, int $at, bool $details = true ): array {
		$total = (int) ( $answer['total'] ?? 0 );
		$live  = (int) ( $answer['live'] ?? 0 );
		$nodes = array();
		foreach ( (array) ( $answer['nodes'] ?? array() ) as $node ) {
			if ( is_array( $node ) && isset( $node['node'], $node['state'] ) ) {
				$nodes[] = array_intersect_key( array_map( array( self::class, 'text' ), $node ), array_flip( array( 'node', 'state', 'at', 'error', 'detail', 'via' ) ) );
			}
		}
		$shown = $details ? $nodes : array();
		if ( ! empty( $answer['missing'] ) ) {
			return $this->not_delivered( $at, $live, $total, $nodes, $details );
		}
		if ( 0 === $total ) {
			return $this->status( 'failed', __( 'The purger knows no edge node.', 'varnish-edge' ), 0, 0, $shown );
		}
		if ( ! empty( $answer['complete'] ) ) {
			$ms = self::ms( $answer, $at );
			/* translators: 1: nodes where the change is live, 2: all nodes, 3: milliseconds from the change. */
			$message = sprintf( _n( 'Live on %1$d of %2$d edge node in %3$d ms', 'Live on %1$d of %2$d edge nodes in %3$d ms', $total, 'varnish-edge' ), $live, $total, $ms );
			return $this->status( 'live', $message . self::via( $nodes ), $live, $total, $shown, $ms );
		}
		if ( ! $details ) {
			return $this->counted( $live, $total, $nodes );
		}
		$state   = 'pending';
		$reasons = array();
		$waiting = array();
		foreach ( self::not_applied( $nodes ) as $node ) {
			if ( 'failed' === $node['state'] ) {
				$state = 'failed';
				/* translators: 1: node name, 2: the error. */
				$reasons[] = sprintf( __( '%1$s failed to apply it: %2$s', 'varnish-edge' ), $node['node'], $node['error'] );
			} elseif ( 'down' === $node['state'] ) {
				$state     = 'failed' === $state ? $state : 'partial';
				$reasons[] = $node['retrying']
					/* translators: 1: node name, 2: the error. */
					? sprintf( __( '%1$s has not applied it: down (%2$s), retrying', 'varnish-edge' ), $node['node'], $node['error'] )
					/* translators: 1: node name, 2: the error. */
					: sprintf( __( '%1$s has not applied it: down (%2$s)', 'varnish-edge' ), $node['node'], $node['error'] );
			} else {
				$waiting[] = $node['node'];
			}
		}
		if ( $waiting ) {
			/* translators: %s: node names. */
			$reasons[] = sprintf( __( 'waiting for %s', 'varnish-edge' ), implode( ', ', $waiting ) );
		}
		/* translators: 1: nodes where the change is live, 2: all nodes, 3: which nodes have not applied it and why. */
		$message = sprintf( _n( 'Live on %1$d of %2$d edge node; %3$s', 'Live on %1$d of %2$d edge nodes; %3$s', $total, 'varnish-edge' ), $live, $total, implode( '; ', $reasons ) );
		return $this->status( $state, $message . self::via( $nodes ), $live, $total, $nodes );
	}

	/**
	 * A status that is not complete, in counts only: how many nodes failed to apply the events,
	 * are down, or are still applying them; no node name, address or error.
	 *
	 * @param array<int,array<string,string>> $nodes Nodes of the answer.
	 */
	private function counted( int $live, int $total, array $nodes ): array {
		$count = array(
			'failed'  => 0,
			'down'    => 0,
			'waiting' => 0,
		);
		foreach ( self::not_applied( $nodes ) as $node ) {
			++$count[ $node['state'] ];
		}
		$reasons = array();
		if ( $count['failed'] ) {
			/* translators: %d: number of edge nodes. */
			$reasons[] = sprintf( _n( '%d node failed to apply it', '%d nodes failed to apply it', $count['failed'], 'varnish-edge' ), $count['failed'] );
		}
		if ( $count['down'] ) {
			/* translators: %d: number of edge nodes. */
			$reasons[] = sprintf( _n( '%d node is down', '%d nodes are down', $count['down'], 'varnish-edge' ), $count['down'] );
		}
		if ( $count['waiting'] ) {
			/* translators: %d: number of edge nodes. */
			$reasons[] = sprintf( _n( 'waiting for %d node', 'waiting for %d nodes', $count['waiting'], 'varnish-edge' ), $count['waiting'] );
		}
		$state = $count['failed'] ? 'failed' : ( $count['down'] ? 'partial' : 'pending' );
		/* translators: 1: nodes where the change is live, 2: all nodes, 3: how many nodes have not applied it and why. */
		$message = sprintf( _n( 'Live on %1$d of %2$d edge node; %3$s', 'Live on %1$d of %2$d edge nodes; %3$s', $total, 'varnish-edge' ), $live, $total, implode( '; ', $reasons ) );
		return $this->status( $state, $message . self::via( $nodes ), $live, $total );
	}

	/**
	 * The nodes of a status that have not applied its events, and why: `failed` (the node gave
	 * up on them: `error` is its reason), `down` (the purger cannot reach it: `error` in plain
	 * words, `retrying` when the purger keeps trying) or `waiting` (not applied yet, no error).
	 *
	 * @param array<int,array<string,string>> $nodes Nodes of a status (`nodes`).
	 * @return array<int,array{node:string,state:string,error:string,retrying:bool}>
	 */
	public static function not_applied( array $nodes ): array {
		$out = array();
		foreach ( $nodes as $node ) {
			$state = (string) ( $node['state'] ?? '' );
			if ( 'failed' === $state ) {
				$error = $node['error'] ?? __( 'no reason given', 'varnish-edge' );
			} elseif ( 'pending' === $state && isset( $node['error'] ) ) {
				$state = 'down';
				$error = self::plain_error( $node['error'] );
			} elseif ( 'pending' === $state ) {
				$state = 'waiting';
				$error = '';
			} else {
				continue;
			}
			$out[] = array(
				'node'     => (string) ( $node['node'] ?? '' ),
				'state'    => $state,
				'error'    => $error,
				'retrying' => 'down' === $state && false !== stripos( $node['detail'] ?? '', 'retrying' ),
			);
		}
		return $out;
	}

	/**
	 * " (applied as a site-wide purge on N nodes)" when nodes refused the change as sent and the
	 * purger banned the whole site there instead (receipt `via: host-ban`): correct, but every
	 * page of the site renders again. A split request (`via: split`) is not worth a word.
	 *
	 * @param array<int,array<string,string>> $nodes Nodes of the answer.
	 */
	private static function via( array $nodes ): string {
		$banned = count( array_filter( array_column( $nodes, 'via' ), static fn( string $via ): bool => 'host-ban' === $via ) );
		if ( ! $banned ) {
			return '';
		}
		/* translators: %d: number of edge nodes. */
		return ' (' . sprintf( _n( 'applied as a site-wide purge on %d node', 'applied as a site-wide purge on %d nodes', $banned, 'varnish-edge' ), $banned ) . ')';
	}

	/**
	 * Some events are not at the purger yet: in the outbox, retried, or on their way.
	 *
	 * @param int                            $at      When the action happened (ms).
	 * @param array<int,array<string,mixed>> $nodes   Nodes.
	 * @param bool                           $details The delivery error and the nodes; false: neither.
	 */
	private function not_delivered( int $at, int $live, int $total, array $nodes, bool $details ): array {
		$delivery = Outbox_Delivery::status();
		$nodes    = $details ? $nodes : array();
		if ( '' !== $delivery['last_error'] && $delivery['last_error_at'] * 1000 >= $at - 1000 && $delivery['last_error_at'] >= $delivery['last_success'] ) {
			$message = $details
				/* translators: %s: why delivery failed. */
				? sprintf( __( 'Not at the purger yet: %s The outbox retries it.', 'varnish-edge' ), $delivery['last_error'] )
				: __( 'Not at the purger yet: the outbox retries it.', 'varnish-edge' );
			return $this->status( 'failed', $message, $live, $total, $nodes );
		}
		return $this->status( 'pending', __( 'Sending to the purger…', 'varnish-edge' ), $live, $total, $nodes );
	}

	/**
	 * Milliseconds from the action to the last node applying it, by this site's clock when the
	 * purger's agrees (the action's time is known to the millisecond here), else the purger's.
	 *
	 * @param array<string,mixed> $answer The purger's answer.
	 * @param int                 $at     When the action happened (ms).
	 */
	private static function ms( array $answer, int $at ): int {
		$live_at = isset( $answer['liveAt'] ) && is_string( $answer['liveAt'] ) ? self::parse_ms( $answer['liveAt'] ) : null;
		if ( null !== $live_at && $live_at >= $at ) {
			return $live_at - $at;
		}
		return max( 0, (int) ( $answer['ms'] ?? 0 ) );
	}

	/**
	 * An ISO 8601 time in ms since the epoch, or null.
	 */
	private static function parse_ms( string $iso ): ?int {
		$date = \DateTimeImmutable::createFromFormat( 'Y-m-d\TH:i:s.uP', preg_replace( '/Z$/', '+00:00', $iso ) );
		if ( ! $date ) {
			$date = \DateTimeImmutable::createFromFormat( 'Y-m-d\TH:i:sP', preg_replace( '/Z$/', '+00:00', $iso ) );
		}
		return $date ? (int) $date->format( 'Uv' ) : null;
	}

	/**
	 * A value of the purger's answer as short plain text.
	 */
	private static function text( mixed $value ): string {
		return is_scalar( $value ) ? mb_substr( wp_strip_all_tags( (string) $value ), 0, 200 ) : '';
	}

	/**
	 * A status.
	 *
	 * @param array<int,array<string,mixed>> $nodes Nodes.
	 * @return array{state:string,message:string,live:int,total:int,ms:int|null,nodes:array<int,array<string,mixed>>,statusUrl:string}
	 */
	private function status( string $state, string $message, int $live = 0, int $total = 0, array $nodes = array(), ?int $ms = null ): array {
		return array(
			'state'     => $state,
			'message'   => $message,
			'live'      => $live,
			'total'     => $total,
			'ms'        => $ms,
			'nodes'     => $nodes,
			'statusUrl' => self::status_url(),
		);
	}

	/**
	 * The purger's delivery error ("PURGEKEYS to 10.0.0.5:80 failed: ECONNREFUSED") in the words an
	 * editor reads; an error it does not know stays as the purger wrote it.
	 *
	 * @param string $error The node's last error.
	 */
	public static function plain_error( string $error ): string {
		$words = array(
			'ECONNREFUSED'                => __( 'connection refused', 'varnish-edge' ),
			'ECONNRESET'                  => __( 'connection reset', 'varnish-edge' ),
			'ETIMEDOUT'                   => __( 'timed out', 'varnish-edge' ),
			'UND_ERR_CONNECT_TIMEOUT'     => __( 'timed out connecting', 'varnish-edge' ),
			'UND_ERR_HEADERS_TIMEOUT'     => __( 'no answer in time', 'varnish-edge' ),
			'UND_ERR_SOCKET'              => __( 'connection lost', 'varnish-edge' ),
			'EHOSTUNREACH'                => __( 'host unreachable', 'varnish-edge' ),
			'ENOTFOUND'                   => __( 'unknown host name', 'varnish-edge' ),
			'EAI_AGAIN'                   => __( 'host name lookup failed', 'varnish-edge' ),
		);
		if ( preg_match( '/ failed: ([A-Z_]+)$/', $error, $m ) && isset( $words[ $m[1] ] ) ) {
			return $words[ $m[1] ];
		}
		return $error;
	}
}
