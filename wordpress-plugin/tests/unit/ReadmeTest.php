<?php
use VarnishEdge\CLI_Command;

/**
 * readme.txt tells the truth: the purger's real port, a short description that fits
 * the directory's 150 characters, `Tested up to` / `Requires at least` the newest / oldest
 * WordPress in platforms.json (the versions the suite runs on), and every WP-CLI command.
 */
class ReadmeTest extends \PHPUnit\Framework\TestCase {

	private static function readme() {
		return file_get_contents( dirname( __DIR__, 2 ) . '/varnish-edge/readme.txt' );
	}

	public function test_purger_url_example_uses_the_purgers_port() {
		$root = dirname( __DIR__, 3 );
		// The port the purger's image listens on, the one compose's WordPress is given, the readme's.
		$this->assertSame( 1, preg_match( '/PURGER_PORT=(\d+)/', (string) file_get_contents( $root . '/stack/images/purger/Dockerfile' ), $m ) );
		$this->assertSame( 1, preg_match( '/PURGER_URL:\s*"?http:\/\/purger:(\d+)/', (string) file_get_contents( $root . '/docker-compose.yml' ), $c ) );
		$this->assertSame( 1, preg_match( "/VARNISH_EDGE_PURGER_URL', 'http:\/\/purger:(\d+)'/", self::readme(), $r ) );
		$this->assertSame( $m[1], $c[1] );
		$this->assertSame( $m[1], $r[1] );
	}

	public function test_short_description_fits_150_characters() {
		$parts = preg_split( '/\R\R/', trim( self::readme() ) );
		// Header block, then the short description paragraph.
		$this->assertStringStartsWith( '=== Varnish Edge ===', $parts[0] );
		$short = trim( $parts[1] );
		$this->assertStringStartsNotWith( '==', $short );
		$this->assertLessThanOrEqual( 150, mb_strlen( $short ) );
	}

	/**
	 * WordPress versions the project supports (platforms.json, `wordpress`), oldest first.
	 *
	 * @return string[]
	 */
	private static function supported_wordpress() {
		$platforms = json_decode( (string) file_get_contents( dirname( __DIR__, 3 ) . '/platforms.json' ), true );
		$versions  = array_map( 'strval', array_column( (array) ( $platforms['wordpress'] ?? array() ), 'version' ) );
		usort( $versions, 'version_compare' );
		return $versions;
	}

	public function test_tested_up_to_is_the_newest_wordpress_the_project_runs() {
		$this->assertSame( 1, preg_match( '/^Tested up to:\s*(\S+)$/m', self::readme(), $t ) );
		$versions = self::supported_wordpress();
		$this->assertNotEmpty( $versions, 'platforms.json lists the supported WordPress versions' );
		$this->assertSame( end( $versions ), $t[1] );
	}

	public function test_requires_at_least_is_the_oldest_wordpress_the_project_runs() {
		$versions = self::supported_wordpress();
		$this->assertNotEmpty( $versions, 'platforms.json lists the supported WordPress versions' );
		$this->assertSame( 1, preg_match( '/^Requires at least:\s*(\S+)$/m', self::readme(), $r ) );
		$this->assertSame( $versions[0], $r[1] );
		$header = (string) file_get_contents( dirname( __DIR__, 2 ) . '/varnish-edge/varnish-edge.php' );
		$this->assertSame( 1, preg_match( '/^ \* Requires at least:\s*(\S+)$/m', $header, $h ) );
		$this->assertSame( $versions[0], $h[1], 'the plugin header agrees with readme.txt' );
	}

	public function test_every_wp_cli_command_is_listed() {
		$readme = self::readme();
		$class  = new ReflectionClass( CLI_Command::class );
		foreach ( $class->getMethods( ReflectionMethod::IS_PUBLIC ) as $method ) {
			// WP-CLI's rule: every public method is a subcommand, except static ones and `__*`.
			if ( ! $method->isStatic() && 0 !== strpos( $method->getName(), '__' ) ) {
				$this->assertStringContainsString( '`wp varnish-edge ' . $method->getName(), $readme );
			}
		}
		foreach ( array( 'purge all [--yes]', 'purge url <url>', 'purge post <id>', 'purge key <key>', 'explain <id>', 'outbox status', 'outbox flush' ) as $command ) {
			$this->assertStringContainsString( '`wp varnish-edge ' . $command, $readme );
		}
	}
}
