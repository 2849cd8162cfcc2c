<?php
use VarnishEdge\Key_Scheme;

class KeySchemeTest extends \PHPUnit\Framework\TestCase {

	public function test_keys_are_namespaced_and_valid(): void {
		$s = new Key_Scheme( 'example.com-b2' );
		$this->assertSame( 'example.com-b2-p-42', $s->post( 42 ) );
		$this->assertSame( 'example.com-b2-pl-42', $s->post_listed( 42 ) );
		$this->assertSame( 'example.com-b2-tl-7', $s->term_listing( 7 ) );
		$this->assertSame( 'example.com-b2-date-202611', $s->date( '202611' ) );
		$this->assertSame( 'example.com-b2-r-c-posts', $s->rest_collection( 'posts' ) );
		$this->assertSame( 'example.com-b2-site-name', $s->identity( 'name' ) );
		$this->assertNull( $s->class_of( $s->identity( 'name' ) ), 'never collapsed into a group' );
		$odd = $s->post_type_archive( 'Ünïcode type with spaces' );
		$this->assertMatchesRegularExpression( '/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/', $odd );
		$this->assertNotSame( $odd, $s->post_type_archive( 'other' ) );
	}

	public function test_own_page_and_listing_keys_differ(): void {
		$s = new Key_Scheme( 'ns' );
		$this->assertNotSame( $s->post( 1 ), $s->post_listed( 1 ) );
		$this->assertSame( 'pl', $s->class_of( 'ns-pl-1' ) );
		$this->assertNull( $s->class_of( 'ns-p-1' ), 'own-page keys never collapse into a group' );
		$this->assertNull( $s->class_of( 'other-pl-1' ) );
	}

	public function test_lines_respect_the_budget(): void {
		$s    = new Key_Scheme( 'ns' );
		$keys = array();
		for ( $i = 0; $i < 900; $i++ ) {
			$keys[] = $s->post_listed( $i );
		}
		$lines = $s->header_lines( $keys, 1000, 100000 );
		$this->assertGreaterThan( 5, count( $lines ) );
		foreach ( $lines as $line ) {
			$this->assertLessThanOrEqual( 1000, strlen( $line ) );
		}
		$this->assertSame( $keys, explode( ' ', implode( ' ', $lines ) ), 'no key lost or split' );
	}

	public function test_oversize_page_falls_back_to_group_keys(): void {
		$s    = new Key_Scheme( 'ns' );
		$keys = array( $s->listing( 'home' ), $s->post( 1 ) );
		for ( $i = 0; $i < 3000; $i++ ) {
			$keys[] = $s->post_listed( $i );
		}
		$keys[] = $s->term( 5 );
		$lines  = $s->header_lines( $keys, 4000, 16000 );
		$all    = explode( ' ', implode( ' ', $lines ) );
		$this->assertContains( 'ns-pl-many', $all );
		$this->assertNotContains( 'ns-pl-17', $all );
		$this->assertContains( 'ns-home', $all );
		$this->assertContains( 'ns-p-1', $all );
		$this->assertContains( 'ns-t-5', $all, 'smaller classes are kept' );
		$this->assertLessThanOrEqual( 16000, strlen( implode( ' ', $all ) ) );
	}

	/** The one key grammar, shared with the purger: the constants are its patterns, and the samples hold. */
	public function test_key_grammar_is_the_shared_one(): void {
		$grammar = json_decode( (string) file_get_contents( dirname( __DIR__, 3 ) . '/testdata/key-grammar.json' ), true );
		$this->assertSame( $grammar['key']['pattern'], Key_Scheme::KEY_PATTERN );
		$this->assertSame( $grammar['namespace']['pattern'], Key_Scheme::NAMESPACE_PATTERN );
		foreach ( $grammar['key']['valid'] as $key ) {
			$this->assertTrue( Key_Scheme::is_valid_key( $key ), $key );
		}
		foreach ( $grammar['key']['invalid'] as $key ) {
			$this->assertFalse( Key_Scheme::is_valid_key( $key ), $key );
		}
		foreach ( $grammar['namespace']['valid'] as $ns ) {
			$this->assertTrue( Key_Scheme::is_valid_namespace( $ns ), $ns );
		}
		foreach ( $grammar['namespace']['invalid'] as $ns ) {
			$this->assertFalse( Key_Scheme::is_valid_namespace( $ns ), $ns );
		}
		// PHP's `$` also matches before a final newline; JavaScript's (the purger's) does not.
		$this->assertFalse( Key_Scheme::is_valid_key( "site-p-1\n" ) );
		$this->assertFalse( Key_Scheme::is_valid_namespace( "ve\n" ) );
	}

	/** Every key the scheme makes for a longest namespace is a key of the grammar. */
	public function test_keys_of_a_longest_namespace_stay_in_the_grammar(): void {
		$s = new Key_Scheme( str_repeat( 'n', 48 ) );
		foreach ( array( $s->post( PHP_INT_MAX ), $s->post_type_archive( str_repeat( 'type', 30 ) ), $s->rest_query( 'a b' ), $s->group( 'pl' ) ) as $key ) {
			$this->assertTrue( Key_Scheme::is_valid_key( $key ), $key );
		}
	}

	public function test_purges_include_group_keys(): void {
		$s = new Key_Scheme( 'ns' );
		$this->assertSame( array( 'ns-pl-3', 'ns-pl-many', 'ns-home', 'ns-p-3' ), $s->with_groups( array( 'ns-pl-3', 'ns-home', 'ns-p-3' ) ) );
	}
}
