<?php
/**
 * The real purger for integration tests: builds it, runs tests/support/purger-stack.mjs
 * (testkit's Redis, one Varnish node and the built purger with a secret bound to the test site)
 * and talks to that launcher over its stdin and stdout.
 */
final class Purger_Stack {

	/** @var resource The launcher's process. */
	private $process;

	/** @var array<int,resource> Its stdin and stdout. */
	private $pipes = array();

	/** @var array{url:string,nodes:string[]} Where the purger listens, its nodes. */
	public array $purger;

	/**
	 * Build the purger and start the launcher; throws with the launcher's log when it fails.
	 *
	 * @param array<string,string> $env More of purger-stack.mjs's environment (ALLOWED_SITE).
	 */
	public function __construct( array $env = array() ) {
		$repo = dirname( __DIR__, 3 );
		exec( 'STACK_DIR=' . escapeshellarg( Environment::$dir . '/purger-build' ) . ' bash ' . escapeshellarg( $repo . '/stack/services/purger.sh' ) . ' build 2>&1', $out, $rc );
		if ( 0 !== $rc ) {
			throw new RuntimeException( 'purger build: ' . implode( "\n", $out ) );
		}
		$log           = Environment::$dir . '/purger-stack.log';
		$this->process = proc_open(
			array( 'node', __DIR__ . '/purger-stack.mjs' ),
			array( 0 => array( 'pipe', 'r' ), 1 => array( 'pipe', 'w' ), 2 => array( 'file', $log, 'a' ) ),
			$this->pipes,
			null,
			array_merge(
				getenv(),
				array(
					'SITE'      => Environment::site(),
					'SECRET'    => Environment::SECRET,
					'NAMESPACE' => Environment::NS,
				),
				$env
			)
		);
		$purger = json_decode( (string) fgets( $this->pipes[1] ), true );
		if ( ! is_array( $purger ) || ! isset( $purger['url'] ) ) {
			$this->stop();
			throw new RuntimeException( 'purger-stack.mjs did not start: ' . (string) file_get_contents( $log ) );
		}
		$this->purger = $purger;
	}

	/** Tell the launcher to "stop" or "start" node 0; false unless it answered ok. */
	public function node( string $command ): bool {
		fwrite( $this->pipes[0], "$command 0\n" );
		return 'ok' === trim( (string) fgets( $this->pipes[1] ) );
	}

	/** The launcher stops everything when its stdin closes. */
	public function stop(): void {
		if ( $this->process ) {
			fclose( $this->pipes[0] );
			fclose( $this->pipes[1] );
			proc_close( $this->process );
			$this->process = null;
		}
	}
}
